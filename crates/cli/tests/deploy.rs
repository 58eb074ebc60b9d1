//! The cluster deployments in `deploy/` agree with `--shard`: the Kubernetes Indexed Job has
//! one completion per shard and names each part by its completion index, the merge job's glob
//! finds every part on the same volume, and the Slurm array has one 0-based task per shard.
//! Read with small line-based parsing (the files are written in block style for it).

use std::collections::BTreeSet;
use std::fs;

/// The Kubernetes manifest: the parts' volume, the render Job and the merge Job.
const MANIFEST: &str = "deploy/kubernetes/render-job.yaml";
/// The Slurm array that renders the shards.
const SLURM_RENDER: &str = "deploy/slurm/render-array.sh";
/// The Slurm job that merges them.
const SLURM_MERGE: &str = "deploy/slurm/merge.sh";

/// The variable Kubernetes sets to a pod's index in an Indexed Job.
const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// The variable Slurm sets to a task's index in a job array.
const SLURM_INDEX: &str = "SLURM_ARRAY_TASK_ID";

/// The text of `path`, relative to the repository root.
fn read(path: &str) -> String {
    let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One YAML document of the manifest: its lines with their 1-based numbers in the file.
struct Doc {
    lines: Vec<(usize, String)>,
}

/// The documents of `text`, split at `---` lines.
fn documents(text: &str) -> Vec<Doc> {
    let mut docs = vec![Doc { lines: Vec::new() }];
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            docs.push(Doc { lines: Vec::new() });
        } else {
            docs.last_mut().unwrap().lines.push((i + 1, line.to_string()));
        }
    }
    docs
}

/// `line` without a trailing `# comment` (none of these files quotes a `#`).
fn uncommented(line: &str) -> &str {
    match line.find('#') {
        Some(i) if i == 0 || line.as_bytes()[i - 1] == b' ' => &line[..i],
        _ => line,
    }
}

/// Leading spaces of `line`.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `s` without one pair of surrounding quotes.
fn unquoted(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

impl Doc {
    /// (line, value) of every `key: value` line, a list item's `- key: value` too, with the
    /// key in column `at` when given.
    fn values(&self, key: &str, at: Option<usize>) -> Vec<(usize, String)> {
        let mut found = Vec::new();
        for (n, line) in &self.lines {
            let line = uncommented(line);
            let body = line.trim_start().strip_prefix("- ").unwrap_or(line.trim_start());
            let column = line.len() - body.len();
            if at.is_some_and(|a| a != column) {
                continue;
            }
            if let Some(value) = body.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
                found.push((*n, unquoted(value).to_string()));
            }
        }
        found
    }

    /// The value of the one `key:` line (in column `at` when given).
    fn value(&self, key: &str, at: Option<usize>, what: &str) -> (usize, String) {
        let found = self.values(key, at);
        assert_eq!(found.len(), 1, "{MANIFEST}: {what} should have one `{key}:`, found {found:?}");
        found.into_iter().next().unwrap()
    }

    /// `kind` and `metadata.name`: the document's identity.
    fn id(&self) -> (String, String) {
        let kind = self.values("kind", Some(0)).pop().map(|(_, k)| k).unwrap_or_default();
        let name = self.values("name", Some(2)).first().map(|(_, n)| n.clone()).unwrap_or_default();
        (kind, name)
    }

    /// (line, text) of each list item under the one `key:` line.
    fn items(&self, key: &str, what: &str) -> Vec<(usize, String)> {
        let starts: Vec<_> =
            (0..self.lines.len()).filter(|&i| uncommented(&self.lines[i].1).trim() == format!("{key}:")).collect();
        assert_eq!(starts.len(), 1, "{MANIFEST}: {what} should have one `{key}:` list");
        let key_indent = indent(&self.lines[starts[0]].1);
        let below = self.lines[starts[0] + 1..].iter().take_while(|(_, l)| indent(l) >= key_indent);
        below.filter_map(|(n, l)| Some((*n, unquoted(uncommented(l).trim().strip_prefix("- ")?).to_string()))).collect()
    }

    /// (line, text) of the item under `command:` that runs lumbre.
    fn lumbre_command(&self, what: &str) -> (usize, String) {
        let items = self.items("command", what);
        let found = items.iter().find(|(_, item)| item.starts_with("lumbre "));
        found.cloned().unwrap_or_else(|| panic!("{MANIFEST}: {what}'s command runs no lumbre: {items:?}"))
    }
}

/// The manifest's document of `kind` and `name`, and its index in the file.
fn find<'a>(docs: &'a [Doc], kind: &str, name: &str) -> (usize, &'a Doc) {
    let ids: Vec<_> = docs.iter().map(Doc::id).collect();
    let found = ids.iter().position(|(k, n)| k == kind && n == name);
    let i = found.unwrap_or_else(|| panic!("{MANIFEST}: no {kind} named {name}; documents: {ids:?}"));
    (i, &docs[i])
}

/// The words of a shell command, quotes removed (no word here has a space inside quotes).
fn words(command: &str) -> Vec<String> {
    command.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect()
}

/// The word after `flag` in `words`.
fn flag<'a>(words: &'a [String], flag: &str, file: &str, line: usize) -> &'a str {
    let at = words.iter().position(|w| w == flag);
    let value = at.and_then(|i| words.get(i + 1));
    value.unwrap_or_else(|| panic!("{file}:{line}: no `{flag} VALUE` in {words:?}"))
}

/// `--shard INDEX/N` split into INDEX and N.
fn shard(words: &[String], file: &str, line: usize) -> (String, u32) {
    let value = flag(words, "--shard", file, line);
    let (index, n) = value.rsplit_once('/').unwrap_or_else(|| panic!("{file}:{line}: --shard {value} is not I/N"));
    let n = n.parse().unwrap_or_else(|_| panic!("{file}:{line}: --shard {value}: N is not a number"));
    (index.to_string(), n)
}

/// The names of the shell variables `s` reads (`$NAME` and `${NAME...}`), in order.
fn variables(s: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        let body = rest.strip_prefix('{').unwrap_or(rest);
        let end = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len());
        if end > 0 {
            names.push(body[..end].to_string());
        }
    }
    names
}

/// `s` with each `$NAME` and `${NAME}` replaced by its value in `vars`; a variable not there
/// fails the test.
fn substitute(s: &str, vars: &[(&str, String)], file: &str, line: usize) -> String {
    let mut out = s.to_string();
    for name in variables(s) {
        let value = vars.iter().find(|(n, _)| *n == name);
        let (_, value) = value.unwrap_or_else(|| panic!("{file}:{line}: `{s}` reads ${name}, expected only {vars:?}"));
        out = out.replace(&format!("${{{name}}}"), value).replace(&format!("${name}"), value);
    }
    out
}

/// Whether `path` matches the shell glob `pattern` (`*` and `?` within one path component).
fn glob_matches(pattern: &str, path: &str) -> bool {
    let (p, s) = (pattern.as_bytes(), path.as_bytes());
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => {
            (0..=s.len()).take_while(|&i| i == 0 || s[i - 1] != b'/').any(|i| glob_matches(&pattern[1..], &path[i..]))
        }
        Some(b'?') => !s.is_empty() && s[0] != b'/' && glob_matches(&pattern[1..], &path[1..]),
        Some(c) => s.first() == Some(c) && glob_matches(&pattern[1..], &path[1..]),
    }
}

/// The render and merge commands of the manifest, parsed.
struct Kubernetes {
    docs: Vec<Doc>,
    render_line: usize,
    render: Vec<String>,
    merge_line: usize,
    merge: Vec<String>,
}

impl Kubernetes {
    fn read() -> Self {
        let docs = documents(&read(MANIFEST));
        let (render_line, render) = find(&docs, "Job", "lumbre-render").1.lumbre_command("the render Job");
        let (merge_line, merge) = find(&docs, "Job", "lumbre-merge").1.lumbre_command("the merge Job");
        Self { render_line, render: words(&render), merge_line, merge: words(&merge), docs }
    }

    fn render_job(&self) -> &Doc {
        find(&self.docs, "Job", "lumbre-render").1
    }

    fn merge_job(&self) -> &Doc {
        find(&self.docs, "Job", "lumbre-merge").1
    }
}

/// A job's integer field.
fn number(doc: &Doc, key: &str, what: &str) -> u32 {
    let (line, value) = doc.value(key, None, what);
    value.parse().unwrap_or_else(|_| panic!("{MANIFEST}:{line}: {key}: {value} is not a number"))
}

#[test]
fn render_job_is_indexed_with_one_completion_per_shard() {
    let k = Kubernetes::read();
    let job = k.render_job();
    let (line, mode) = job.value("completionMode", None, "the render Job");
    assert_eq!(mode, "Indexed", "{MANIFEST}:{line}: the render Job must be an Indexed Job");

    let (index, n) = shard(&k.render, MANIFEST, k.render_line);
    let expected = ["auto".to_string(), format!("${K8S_INDEX}"), format!("${{{K8S_INDEX}}}")];
    assert!(
        expected.contains(&index),
        "{MANIFEST}:{}: --shard {index}/{n}: the index should be one of {expected:?}",
        k.render_line
    );
    let completions = number(job, "completions", "the render Job");
    let parallelism = number(job, "parallelism", "the render Job");
    assert_eq!(completions, n, "{MANIFEST}: completions must equal the N of --shard {index}/{n}");
    assert_eq!(
        parallelism, n,
        "{MANIFEST}: parallelism must equal the N of --shard {index}/{n} (one GPU per shard at once)"
    );

    let (line, gpus) = job.value("nvidia.com/gpu", None, "the render Job");
    assert_eq!(gpus, "1", "{MANIFEST}:{line}: each render pod renders one shard on one GPU");
}

#[test]
fn render_parts_are_named_by_the_completion_index_on_the_shared_volume() {
    let k = Kubernetes::read();
    let (_, n) = shard(&k.render, MANIFEST, k.render_line);
    let part = flag(&k.render, "-o", MANIFEST, k.render_line);
    assert_eq!(
        variables(part),
        [K8S_INDEX],
        "{MANIFEST}:{}: the part -o {part} must be named by ${K8S_INDEX}",
        k.render_line
    );
    let (line, mount) = k.render_job().value("mountPath", None, "the render Job");
    assert!(
        part.starts_with(&format!("{mount}/")),
        "{MANIFEST}:{line}: the part {part} is not on the volume at {mount}"
    );
    let names: BTreeSet<_> = (0..n).map(|i| substitute(part, &[(K8S_INDEX, i.to_string())], MANIFEST, line)).collect();
    assert_eq!(names.len(), n as usize, "{MANIFEST}: the parts of different indices share a name: {names:?}");
}

#[test]
fn merge_job_reads_every_part_from_the_same_volume() {
    let k = Kubernetes::read();
    let (_, n) = shard(&k.render, MANIFEST, k.render_line);
    let part = flag(&k.render, "-o", MANIFEST, k.render_line);
    let out = flag(&k.merge, "-o", MANIFEST, k.merge_line).to_string();
    assert_eq!(k.merge[..2], ["lumbre", "merge"], "{MANIFEST}:{}: the merge Job runs {:?}", k.merge_line, k.merge);
    let inputs: Vec<_> = k.merge[2..].iter().take_while(|w| *w != "-o").collect();
    assert_eq!(inputs.len(), 1, "{MANIFEST}:{}: the merge should read one glob, reads {inputs:?}", k.merge_line);
    let glob = inputs[0].as_str();

    for i in 0..n {
        let name = substitute(part, &[(K8S_INDEX, i.to_string())], MANIFEST, k.render_line);
        assert!(
            glob_matches(glob, &name),
            "{MANIFEST}:{}: the merge glob {glob} misses part {i}, {name}",
            k.merge_line
        );
    }
    assert!(
        !glob_matches(glob, &out),
        "{MANIFEST}:{}: the merge glob {glob} also matches its output {out}",
        k.merge_line
    );

    let (render_mount, merge_mount) = (
        k.render_job().value("mountPath", None, "the render Job").1,
        k.merge_job().value("mountPath", None, "the merge Job").1,
    );
    assert_eq!(merge_mount, render_mount, "{MANIFEST}: the merge Job mounts the parts elsewhere");
    let folder = glob.rsplit_once('/').map(|(dir, _)| dir).unwrap_or(".");
    assert_eq!(
        folder, merge_mount,
        "{MANIFEST}:{}: the merge glob {glob} is not in the volume at {merge_mount}",
        k.merge_line
    );
    let render_claim = k.render_job().value("claimName", None, "the render Job").1;
    let merge_claim = k.merge_job().value("claimName", None, "the merge Job").1;
    assert_eq!(merge_claim, render_claim, "{MANIFEST}: the two Jobs mount different claims");
    assert!(k.merge_job().values("nvidia.com/gpu", None).is_empty(), "{MANIFEST}: the merge Job needs no GPU");

    let (pvc_at, pvc) = find(&k.docs, "PersistentVolumeClaim", &render_claim);
    let modes: Vec<_> = pvc.items("accessModes", "the claim").into_iter().map(|(_, m)| m).collect();
    assert_eq!(modes, ["ReadWriteMany"], "{MANIFEST}: the claim {render_claim} is written by pods on several nodes");
    let (render_at, _) = find(&k.docs, "Job", "lumbre-render");
    assert!(pvc_at < render_at, "{MANIFEST}: the claim {render_claim} must come before the Jobs that mount it");
}

/// A shell script's logical lines (continuations joined), each with its first line's number.
struct Script {
    file: &'static str,
    lines: Vec<(usize, String)>,
}

impl Script {
    fn read(file: &'static str) -> Self {
        let mut lines: Vec<(usize, String)> = Vec::new();
        let mut continued = false;
        for (i, line) in read(file).lines().enumerate() {
            let (text, continues) = match line.trim_end().strip_suffix('\\') {
                Some(t) => (t, true),
                None => (line, false),
            };
            match lines.last_mut() {
                Some((_, last)) if continued => last.push_str(text),
                _ => lines.push((i + 1, text.to_string())),
            }
            continued = continues;
        }
        Self { file, lines }
    }

    /// The value of `#SBATCH --option=VALUE`.
    fn sbatch(&self, option: &str) -> (usize, String) {
        let prefix = format!("#SBATCH --{option}=");
        let found = self.lines.iter().find_map(|(n, l)| Some((*n, l.trim().strip_prefix(&prefix)?.to_string())));
        found.unwrap_or_else(|| panic!("{}: no `{prefix}`", self.file))
    }

    /// (line, words) of the one command that runs `lumbre SUBCOMMAND`.
    fn lumbre(&self, subcommand: &str) -> (usize, Vec<String>) {
        let runs: Vec<_> = self.lines.iter().map(|(n, l)| (*n, words(uncommented(l)))).collect();
        let mut found = runs.into_iter().filter(|(_, w)| w.len() > 1 && w[0] == "lumbre" && w[1] == subcommand);
        let first = found.next().unwrap_or_else(|| panic!("{}: no `lumbre {subcommand}` command", self.file));
        assert!(found.next().is_none(), "{}: more than one `lumbre {subcommand}` command", self.file);
        first
    }

    /// (name, value) of each variable the script sets (`name=value` lines).
    fn assigned(&self) -> Vec<(String, String)> {
        let sets = self.lines.iter().filter_map(|(_, l)| l.split_once('='));
        let sets =
            sets.filter(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        sets.map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }
}

#[test]
fn slurm_array_has_one_0_based_task_per_shard() {
    let script = Script::read(SLURM_RENDER);
    let (line, words) = script.lumbre("render");
    let (index, n) = shard(&words, SLURM_RENDER, line);
    let expected = ["auto".to_string(), format!("${SLURM_INDEX}"), format!("${{{SLURM_INDEX}}}")];
    assert!(
        expected.contains(&index),
        "{SLURM_RENDER}:{line}: --shard {index}/{n}: the index should be one of {expected:?}"
    );

    let (line, array) = script.sbatch("array");
    let last = array.strip_prefix("0-").unwrap_or_else(|| panic!("{SLURM_RENDER}:{line}: --array={array} must be 0-K"));
    let last: u32 =
        last.parse().unwrap_or_else(|_| panic!("{SLURM_RENDER}:{line}: --array={array}: K is not a number"));
    assert_eq!(last + 1, n, "{SLURM_RENDER}:{line}: --array={array} has {} tasks, --shard splits into {n}", last + 1);
    let (line, gres) = script.sbatch("gres");
    assert_eq!(gres, "gpu:1", "{SLURM_RENDER}:{line}: each task renders one shard on one GPU");

    // The check that refuses an --array given on the command line compares with the same N.
    let checks =
        script.lines.iter().filter(|(_, l)| l.trim_start().starts_with("if ") && l.contains("SLURM_ARRAY_TASK_COUNT"));
    for (line, text) in checks {
        let numbers = text.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty());
        let numbers: Vec<u32> = numbers.map(|w| w.parse().unwrap()).collect();
        assert!(
            numbers.iter().all(|&k| k == n),
            "{SLURM_RENDER}:{line}: the task count is checked against {numbers:?}, not {n}"
        );
    }
}

#[test]
fn slurm_merge_reads_every_part() {
    let (render, merge) = (Script::read(SLURM_RENDER), Script::read(SLURM_MERGE));
    let (render_line, render_words) = render.lumbre("render");
    let (merge_line, merge_words) = merge.lumbre("merge");
    let (_, n) = shard(&render_words, SLURM_RENDER, render_line);
    let part = flag(&render_words, "-o", SLURM_RENDER, render_line);
    let out = flag(&merge_words, "-o", SLURM_MERGE, merge_line);
    let inputs: Vec<_> = merge_words[2..].iter().take_while(|w| *w != "-o").collect();
    assert_eq!(inputs.len(), 1, "{SLURM_MERGE}:{merge_line}: the merge should read one glob, reads {inputs:?}");

    // The scripts' own variables (the parts' folder) must be set alike in both.
    let (render_sets, merge_sets) = (render.assigned(), merge.assigned());
    for set in &merge_sets {
        assert!(
            render_sets.contains(set),
            "{SLURM_MERGE}: {}={} is not set alike in {SLURM_RENDER}: {render_sets:?}",
            set.0,
            set.1
        );
    }
    let own: Vec<(&str, String)> = merge_sets.iter().map(|(name, _)| (name.as_str(), format!("<{name}>"))).collect();
    let glob = substitute(inputs[0], &own, SLURM_MERGE, merge_line);
    for i in 0..n {
        let mut vars = own.clone();
        vars.push((SLURM_INDEX, i.to_string()));
        let name = substitute(part, &vars, SLURM_RENDER, render_line);
        assert!(
            glob_matches(&glob, &name),
            "{SLURM_MERGE}:{merge_line}: the merge glob {glob} misses part {i}, {name}"
        );
    }
    let out = substitute(out, &own, SLURM_MERGE, merge_line);
    assert!(
        !glob_matches(&glob, &out),
        "{SLURM_MERGE}:{merge_line}: the merge glob {glob} also matches its output {out}"
    );
}

#[test]
fn index_variables_are_the_ones_the_schedulers_set() {
    let k = Kubernetes::read();
    let read: BTreeSet<_> = variables(&k.render.join(" ")).into_iter().collect();
    assert_eq!(
        read,
        BTreeSet::from([K8S_INDEX.to_string()]),
        "{MANIFEST}:{}: the render command's variables",
        k.render_line
    );

    let script = Script::read(SLURM_RENDER);
    let (line, words) = script.lumbre("render");
    let own: BTreeSet<_> = script.assigned().into_iter().map(|(name, _)| name).collect();
    let read: BTreeSet<_> = variables(&words.join(" ")).into_iter().filter(|v| !own.contains(v)).collect();
    assert_eq!(
        read,
        BTreeSet::from([SLURM_INDEX.to_string()]),
        "{SLURM_RENDER}:{line}: the render command's variables besides the script's own"
    );
}
