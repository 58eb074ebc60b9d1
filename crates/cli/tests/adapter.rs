//! Choosing an adapter by index, run as a program: `lumbre info` numbers the adapters,
//! `--adapter N`, `--adapter '#N'` and `LUMBRE_ADAPTER=#N` open the adapter at that index,
//! an index past the last adapter is refused listing them, and a malformed `#x` is refused
//! naming the flag or the variable.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{AdapterSummary, adapters, wgpu};

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{Run, TempDir, lumbre_command, refused, run, succeeds};

const CB: &str = "../../testdata/scenes/CornellBox-Diffuse.obj";

/// Runs `lumbre args` with `LUMBRE_ADAPTER` set to `adapter`, or removed when `None`.
fn with_env(adapter: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = lumbre_command(args);
    match adapter {
        Some(value) => cmd.env("LUMBRE_ADAPTER", value),
        None => cmd.env_remove("LUMBRE_ADAPTER"),
    };
    run(cmd, args)
}

/// The adapters present, failing (with `LUMBRE_REQUIRE_GPU=1`) when there are none.
fn present() -> Option<Vec<AdapterSummary>> {
    test_gpu(wgpu::Features::empty())?;
    Some(adapters())
}

/// The value of `property` in the "Chosen adapter" table of `lumbre info`'s output.
fn chosen(stdout: &str, property: &str) -> String {
    let table = stdout.split("Chosen adapter").nth(1).unwrap_or_else(|| panic!("no chosen adapter in\n{stdout}"));
    let line = table
        .lines()
        .find(|l| l.split("  ").next() == Some(property))
        .unwrap_or_else(|| panic!("no {property:?} row in\n{stdout}"));
    line[property.len()..].trim().to_string()
}

/// The index of lavapipe's adapter where it is present (it is in CI), else 0.
fn llvmpipe_or_first(adapters: &[AdapterSummary]) -> usize {
    adapters.iter().position(|a| a.name.contains("llvmpipe")).unwrap_or(0)
}

#[test]
fn info_numbers_the_adapters_and_names_the_chosen_index() {
    let Some(adapters) = present() else { return };
    let run = with_env(None, &["info"]);
    assert!(run.ok, "{}", run.stderr);
    let mut lines = run.stdout.lines().skip_while(|l| *l != "Adapters").skip(1);
    let header = lines.next().expect("a header");
    assert!(header.starts_with("# ") && header.contains("name"), "{}", run.stdout);
    for (i, a) in adapters.iter().enumerate() {
        let row = lines.next().unwrap_or_else(|| panic!("no row {i} in\n{}", run.stdout));
        let (index, rest) = row.split_once(' ').expect("cells");
        assert_eq!(index, i.to_string(), "{row}");
        assert!(rest.trim_start().starts_with(&a.name), "{row}");
    }
    let index: usize = chosen(&run.stdout, "index").parse().expect("an index");
    assert_eq!(chosen(&run.stdout, "name"), adapters[index].name);
    // The JSON form numbers them as well.
    let json = with_env(None, &["info", "--json"]);
    assert!(
        json.ok && json.stdout.contains(&format!("{{\"#\": 0, \"name\": \"{}\"", adapters[0].name)),
        "{}",
        json.stdout
    );
    assert!(json.stdout.contains(&format!("{{\"property\": \"index\", \"value\": {index}}}")), "{}", json.stdout);
}

#[test]
fn an_index_by_flag_or_variable_opens_that_adapter() {
    let Some(adapters) = present() else { return };
    let lavapipe = llvmpipe_or_first(&adapters);
    for i in [0, lavapipe] {
        let flag = i.to_string();
        let hashed = format!("#{i}");
        let runs = [
            with_env(None, &["info", "--adapter", &flag]),
            with_env(None, &["info", "--adapter", &hashed]),
            with_env(Some(&hashed), &["info"]),
            with_env(Some(&flag), &["info"]),
            // The flag wins over the variable.
            with_env(Some("matches no adapter"), &["info", "--adapter", &hashed]),
        ];
        for run in runs {
            assert!(run.ok, "{}", run.stderr);
            assert_eq!(chosen(&run.stdout, "index"), flag, "{}", run.stdout);
            assert_eq!(chosen(&run.stdout, "name"), adapters[i].name, "{}", run.stdout);
        }
    }
    if adapters[lavapipe].name.contains("llvmpipe") {
        let run = with_env(Some("llvmpipe"), &["info"]);
        assert_eq!(chosen(&run.stdout, "index"), lavapipe.to_string(), "{}", run.stdout);
    }
}

/// `lumbre render` of the Cornell box at 8x8 on the GPU into `out`, on `adapter`.
fn render<'a>(out: &'a str, adapter: &'a str) -> [&'a str; 12] {
    ["render", CB, "--width", "8", "--height", "8", "--backend", "gpu", "-o", out, "--adapter", adapter]
}

#[test]
fn a_gpu_command_opens_the_adapter_by_index() {
    let Some(adapters) = present() else { return };
    let dir = TempDir::new("adapter-render");
    let out = dir.join("cb.png");
    let path = out.to_str().expect("a UTF-8 path");
    let past = format!("#{}", adapters.len().max(5));
    refused(&render(path, &past), &[&format!("no adapter {past}"), &format!("#0 {}", adapters[0].name)]);
    assert!(!out.exists(), "a refused render wrote {path}");
    succeeds(&render(path, &format!("#{}", llvmpipe_or_first(&adapters))));
    assert!(std::fs::metadata(&out).is_ok_and(|m| m.len() > 0), "no image at {path}");
}

#[test]
fn an_index_past_the_last_adapter_is_refused_listing_them() {
    let Some(adapters) = present() else { return };
    let past = adapters.len().max(5);
    let first = format!("#0 {}", adapters[0].name);
    let last = format!("#{} {}", adapters.len() - 1, adapters[adapters.len() - 1].name);
    let asked = format!("no adapter #{past}");
    let words = [asked.as_str(), first.as_str(), last.as_str()];
    refused(&["info", "--adapter", &format!("#{past}")], &words);
    refused(&["info", "--adapter", &past.to_string()], &words);
    let run = with_env(Some(&format!("#{past}")), &["info"]);
    assert!(!run.ok, "{}", run.stdout);
    for w in words {
        assert!(run.stderr.contains(w), "{w:?} not in\n{}", run.stderr);
    }
    // The adapters are still listed, with their indices, before the error.
    assert!(run.stdout.contains(&adapters[0].name), "{}", run.stdout);
    // A name no adapter has lists them the same way.
    refused(&["info", "--adapter", "matches no adapter"], &["\"matches no adapter\"", first.as_str()]);
}

#[test]
fn a_malformed_index_is_refused_naming_the_flag_or_variable() {
    for bad in ["#x", "#", "#-1", ""] {
        refused(&["info", "--adapter", bad], &["--adapter", &format!("{bad:?}")]);
    }
    // Refused before any work, even by a command that never opens a GPU.
    let run = with_env(Some("#x"), &["scenes"]);
    assert!(!run.ok, "{}", run.stdout);
    assert!(run.stderr.contains("LUMBRE_ADAPTER") && run.stderr.contains("\"#x\""), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}
