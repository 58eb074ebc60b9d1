//! `cargo xtask <task>`: the project's developer tasks.
//!
//! - `test`: make sure a Vulkan driver exists (installing Mesa's lavapipe when run as root
//!   with apt-get), then fmt check, clippy, the algorithm crates built without their `gpu`
//!   feature (and free of wgpu and naga), rustdoc with warnings as errors, shader
//!   validation, the workspace tests with `LUMBRE_REQUIRE_GPU=1`, and the package check
//!   (`cargo publish --workspace --dry-run`).
//! - `package`: the package check alone.
//! - `validate-shaders`: compose and validate every WGSL shader with naga, with a report.
//! - `golden [--bless]`: run the golden-image tests; with `--bless`, rewrite the images in
//!   `testdata/golden/` from the CPU renders first.
//! - `gpu-tests DIR`: build the release test binaries that use a GPU, strip them into `DIR`
//!   with a `run.sh` that runs them all with `LUMBRE_REQUIRE_GPU=1`: the GPU test suite on
//!   a machine without a Rust toolchain (run it from a checkout at this same path, where the
//!   tests find their data).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use lumbre_shaders::compose;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("validate-shaders") => validate_shaders(),
        Some("package") => package(),
        Some("golden") => golden(args.iter().any(|a| a == "--bless")),
        Some("gpu-tests") if args.len() == 2 => gpu_tests(Path::new(&args[1])),
        _ => {
            eprintln!("usage: cargo xtask <test | validate-shaders | package | golden [--bless] | gpu-tests DIR>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn validate_shaders() -> Result<(), String> {
    let wgsl = compose::wgsl_dir(&root().join("shaders"));
    let names = compose::discover(&wgsl)?;
    let mut failed = 0;
    let mut count = 0;
    for name in &names {
        let variants = compose::variants(&wgsl, name)?;
        let variants: Vec<Option<&str>> =
            if variants.is_empty() { vec![None] } else { variants.iter().map(|v| Some(v.as_str())).collect() };
        for variant in variants {
            count += 1;
            let label = match variant {
                Some(v) => format!("{name}:{v}"),
                None => name.clone(),
            };
            match compose::compose(&wgsl, name, variant).and_then(|c| compose::validate(&c).map(|e| (c, e))) {
                Ok((c, entries)) => {
                    let req: Vec<String> = c.requires.iter().map(|r| format!("{r:?}")).collect();
                    let req = if req.is_empty() { String::new() } else { format!(" requires {}", req.join(", ")) };
                    let eps: Vec<String> = entries.iter().map(|e| format!("{} {:?}", e.name, e.bindings)).collect();
                    println!("ok    {label:<36} entry points (bindings): {}{req}", eps.join(", "));
                }
                Err(e) => {
                    failed += 1;
                    println!("FAIL  {label}\n{e}");
                }
            }
        }
    }
    println!("{count} shaders, {failed} invalid");
    if failed > 0 { Err(format!("{failed} shader(s) failed validation")) } else { Ok(()) }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    println!("$ {cmd:?}");
    let status = cmd.current_dir(root()).status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{cmd:?} failed with {status}")) }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Whether a Vulkan loader and at least one driver (ICD) are installed.
fn vulkan_present() -> bool {
    let loader = [
        "/usr/lib/x86_64-linux-gnu/libvulkan.so.1",
        "/usr/lib/aarch64-linux-gnu/libvulkan.so.1",
        "/usr/lib/libvulkan.so.1",
        "/usr/lib64/libvulkan.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists());
    let env_icd = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"].iter().any(|v| std::env::var_os(v).is_some());
    let icd = env_icd
        || ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"]
            .iter()
            .any(|d| std::fs::read_dir(d).is_ok_and(|mut r| r.next().is_some()));
    (loader || cfg!(not(target_os = "linux"))) && icd
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn ensure_vulkan() -> Result<(), String> {
    if !cfg!(target_os = "linux") || vulkan_present() {
        return Ok(());
    }
    let apt = Path::new("/usr/bin/apt-get").exists();
    if apt && is_root() {
        println!("no Vulkan driver found: installing Mesa's lavapipe (a Vulkan device on the CPU)");
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "mesa-vulkan-drivers", "libvulkan1"])
            .env("DEBIAN_FRONTEND", "noninteractive"))?;
        Ok(())
    } else {
        Err("no Vulkan driver found; install one, e.g. `sudo apt-get install mesa-vulkan-drivers libvulkan1` \
             (lavapipe, a Vulkan device on the CPU), then run `cargo xtask test` again"
            .into())
    }
}

/// The test binaries holding golden-image tests.
const GOLDEN: &[(&str, &str)] = &[("lumbre-raytrace", "golden"), ("lumbre-raytrace", "volume")];

fn golden(bless: bool) -> Result<(), String> {
    for (package, test) in GOLDEN {
        let mut cmd = cargo();
        cmd.args(["test", "--release", "-p", package, "--test", test]);
        if bless {
            cmd.env("LUMBRE_BLESS", "1");
        }
        run(&mut cmd)?;
    }
    if bless {
        println!("golden images rewritten under testdata/golden/: review them (git diff) before committing");
    }
    Ok(())
}

fn test() -> Result<(), String> {
    ensure_vulkan()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    without_gpu()?;
    run(cargo().args(["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings"))?;
    validate_shaders()?;
    run(cargo().args(["test", "--workspace"]).env("LUMBRE_REQUIRE_GPU", "1"))?;
    package()?;
    println!("all checks passed");
    Ok(())
}

/// The algorithm crates: each builds without its `gpu` feature.
const ALGORITHMS: &[&str] = &[
    "lumbre-morton",
    "lumbre-compact",
    "lumbre-kdtree",
    "lumbre-octree",
    "lumbre-raytrace",
    "lumbre-density",
    "lumbre-radiosity",
    "lumbre-lightcuts",
];

/// Every algorithm crate builds without its default features (one check; the features of
/// each package are its own), and then depends on neither wgpu nor naga.
fn without_gpu() -> Result<(), String> {
    let mut check = cargo();
    check.args(["check", "--no-default-features"]);
    for name in ALGORITHMS {
        check.args(["-p", name]);
    }
    run(&mut check)?;
    for name in ALGORITHMS {
        let mut tree = cargo();
        tree.args(["tree", "-p", name, "--no-default-features", "-e", "normal", "--prefix", "none"]);
        let out = tree.current_dir(root()).output().map_err(|e| format!("{tree:?}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{tree:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let deps = String::from_utf8_lossy(&out.stdout);
        let gpu = deps.lines().find(|l| l.starts_with("wgpu") || l.starts_with("naga "));
        if let Some(dep) = gpu {
            return Err(format!("{name} without default features still depends on {dep}"));
        }
    }
    Ok(())
}

/// The package check: every published crate packs and builds on its own as `cargo publish`
/// would upload it (metadata, readme, license files, versioned dependencies, no file from
/// outside the crate).
fn package() -> Result<(), String> {
    forget_packed_sources()?;
    run(cargo().args(["publish", "--workspace", "--dry-run", "--allow-dirty"]))
}

/// Removes the sources of our crates that an earlier package check unpacked into cargo's
/// home. The dry run publishes to a local registry named after the checkout's path
/// (`registry/src/-<hash>/`), and cargo reuses an unpacked crate of the same version, so
/// a second check from the same path would build the first one's sources.
fn forget_packed_sources() -> Result<(), String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else { return Ok(()) };
    let Ok(registries) = std::fs::read_dir(&src) else { return Ok(()) };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for krate in std::fs::read_dir(registry.path()).into_iter().flatten().flatten() {
            if krate.file_name().to_string_lossy().starts_with("lumbre-") {
                std::fs::remove_dir_all(krate.path()).map_err(|e| format!("{}: {e}", krate.path().display()))?;
            }
        }
    }
    Ok(())
}

/// The value of `"key":"..."` in one line of cargo's JSON messages (no escapes in paths).
fn json_str<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    line[at..].split('"').next()
}

fn gpu_tests(dir: &Path) -> Result<(), String> {
    let out = cargo()
        .args(["test", "--release", "--workspace", "--no-run", "--message-format=json"])
        .output()
        .map_err(|e| format!("cargo test --no-run: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo test --no-run failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (Some(exe), Some(src)) = (json_str(line, "executable"), json_str(line, "src_path")) else { continue };
        // Integration tests, and examples built as tests, that open a GPU through
        // lumbre_gpu::testing (directly or in their `common` module).
        let mut source = std::fs::read_to_string(src).unwrap_or_default();
        if source.contains("mod common;") {
            let common = Path::new(src).with_file_name("common").join("mod.rs");
            source += &std::fs::read_to_string(common).unwrap_or_default();
        }
        let example_test = line.contains("\"kind\":[\"example\"]") && line.contains("\"test\":true");
        if !(line.contains("\"kind\":[\"test\"]") || example_test) || !source.contains("lumbre_gpu::testing") {
            continue;
        }
        let crate_dir = Path::new(src).ancestors().find(|p| p.join("Cargo.toml").exists());
        let krate = crate_dir.and_then(|p| p.file_name()).map_or("x".into(), |n| n.to_string_lossy().to_string());
        let stem = Path::new(src).file_stem().map_or("t".into(), |n| n.to_string_lossy().to_string());
        let name = format!("{krate}-{stem}");
        let dst = dir.join(&name);
        let stripped = Command::new("strip").arg("-o").arg(&dst).arg(exe).status().is_ok_and(|s| s.success());
        if !stripped {
            std::fs::copy(exe, &dst).map_err(|e| format!("{exe}: {e}"))?;
        }
        names.push(name);
    }
    let script: String = std::iter::once("#!/bin/sh\n# GPU tests; exits non-zero if any fails.\nexport LUMBRE_REQUIRE_GPU=1\ncd \"$(dirname \"$0\")\"\nrc=0\n".to_string())
        .chain(names.iter().map(|n| format!("echo \"== {n}\"; ./{n} --test-threads 4 || rc=1\n")))
        .chain(std::iter::once("exit $rc\n".to_string()))
        .collect();
    std::fs::write(dir.join("run.sh"), script).map_err(|e| format!("run.sh: {e}"))?;
    run(Command::new("chmod").arg("+x").arg(dir.join("run.sh")))?;
    println!("{} GPU test binaries in {}: run {}/run.sh on the GPU machine", names.len(), dir.display(), dir.display());
    Ok(())
}
