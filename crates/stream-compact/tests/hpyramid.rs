//! The histogram pyramid: CPU against GPU, exact.

mod common;

use common::{describe, gpus};
use lumbre_compact::{Emit, HistoPyramid, Predicate, Select, Stream};
use lumbre_gpu::{Tolerance, conformance};

fn stream(n: usize, every: usize) -> Stream {
    Stream {
        values: (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect(),
        flags: (0..n).map(|i| (i % every == 0) as u32).collect(),
    }
}

#[test]
fn histogram_pyramid_agrees() {
    for gpu in gpus().into_iter().take(1) {
        for n in [0usize, 1, 3, 4, 5, 16, 17, 1000, 65_537] {
            for every in [1, 2, 7] {
                let s = stream(n, every);
                for select in [Select::Flags, Select::Where(Predicate::NonZero)] {
                    for emit in [Emit::Values, Emit::Indices] {
                        let hp = HistoPyramid { select, emit, index_base: 0 };
                        conformance(&hp, &gpu, &s, Tolerance::EXACT).unwrap_or_else(|e| {
                            panic!("{} n={n} every={every} {select:?} {emit:?}: {e}", describe(&gpu))
                        });
                    }
                }
            }
        }
    }
    let hp = HistoPyramid { select: Select::Where(Predicate::Lt(3)), emit: Emit::Values, index_base: 0 };
    assert!(hp.cpu(&stream(4, 1)).is_err(), "only flags and NonZero are supported");
}

#[test]
fn histogram_pyramid_runs_long_streams_in_pieces() {
    let Some(small) = gpus().into_iter().find(|g| g.limits().max_storage_buffer_binding_size == 64 << 10) else {
        return;
    };
    for emit in [Emit::Values, Emit::Indices] {
        let hp = HistoPyramid { select: Select::Flags, emit, index_base: 0 };
        conformance(&hp, &small, &stream(70_000, 3), Tolerance::EXACT).unwrap();
    }
}
