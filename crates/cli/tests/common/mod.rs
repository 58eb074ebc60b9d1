//! What the CLI's test programs share: a temporary folder, and running `lumbre` as a user
//! would, checking that it never panics or dies by a signal.

use std::fs::File;
use std::process::{Command, Stdio};

pub use lumbre_gpu::testing::TempDir;

/// What a run of `lumbre` did.
pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `args` from the crate's folder with standard output going to `stdout` (captured
/// when `None`); never a panic or a kill by a signal, whatever the input.
pub fn lumbre_to(args: &[&str], stdout: Option<File>) -> Run {
    let mut cmd = lumbre_command(args);
    cmd.stdout(stdout.map_or_else(Stdio::piped, Stdio::from));
    run(cmd, args)
}

/// `lumbre args` from the crate's folder, standard error captured, to adjust before [`run`].
pub fn lumbre_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lumbre"));
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR")).stderr(Stdio::piped());
    cmd
}

/// Runs `cmd` (made by [`lumbre_command`] from `args`): never a panic or a kill by a signal.
pub fn run(mut cmd: Command, args: &[&str]) -> Run {
    let out = cmd.output().expect("run lumbre");
    let run = Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(out.status.code().is_some(), "killed by a signal: {args:?}\n{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{args:?} panicked:\n{}", run.stderr);
    run
}

pub fn lumbre(args: &[&str]) -> Run {
    lumbre_to(args, None)
}

/// Runs `args` and expects an error whose message contains every one of `words`.
pub fn refused(args: &[&str], words: &[&str]) -> String {
    let run = lumbre(args);
    assert!(!run.ok, "{args:?} succeeded:\n{}", run.stdout);
    for w in words {
        assert!(run.stderr.contains(w), "{args:?}: {w:?} not in\n{}", run.stderr);
    }
    run.stderr
}

/// Runs `args` and expects success.
pub fn succeeds(args: &[&str]) -> Run {
    let run = lumbre(args);
    assert!(run.ok, "{args:?} failed:\n{}", run.stderr);
    run
}
