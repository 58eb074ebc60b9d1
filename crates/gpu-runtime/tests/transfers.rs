//! Transfer accounting: every upload, write, uniform and read-back through a context is
//! counted once with its bytes, clones share the counters, and work that stays on the
//! device (new buffers, copies, dispatches) counts nothing.

use lumbre_gpu::testing::own_gpu;
use lumbre_gpu::{Compute, CopyKernel, Traffic, Transfers};

fn traffic(calls: u64, bytes: u64) -> Traffic {
    Traffic { calls, bytes }
}

#[test]
fn uploads_writes_and_uniforms_are_counted_with_their_bytes() {
    let Some(gpu) = own_gpu(wgpu::Features::empty()) else { return };
    assert_eq!(gpu.transfers(), Transfers::default(), "a new context has moved nothing");
    let t0 = gpu.transfers();
    let buf = gpu.upload(&[7u32; 1000]).unwrap();
    assert_eq!((gpu.transfers() - t0).uploads, traffic(1, 4000));
    // Zero-filled buffers, and empty uploads, move nothing.
    let t1 = gpu.transfers();
    let _zero = gpu.zeroed::<u32>(1 << 16).unwrap();
    let _empty = gpu.upload::<u32>(&[]).unwrap();
    assert_eq!(gpu.transfers() - t1, Transfers::default());
    // A uniform is padded to 16 bytes.
    let t2 = gpu.transfers();
    let _u = gpu.uniform(&[1u32, 2, 3]).unwrap();
    assert_eq!((gpu.transfers() - t2).uploads, traffic(1, 16));
    // An aligned write is one upload; an unaligned one reads its neighbouring bytes first.
    let t3 = gpu.transfers();
    gpu.write(&buf, 10, &[1u32, 2]).unwrap();
    assert_eq!(gpu.transfers() - t3, Transfers { uploads: traffic(1, 8), ..Default::default() });
    let bytes = gpu.upload(&[0u8; 9]).unwrap();
    let t4 = gpu.transfers();
    gpu.write(&bytes, 5, &[0xAAu8]).unwrap();
    let d = gpu.transfers() - t4;
    assert_eq!((d.uploads, d.downloads), (traffic(1, 4), traffic(1, 4)));
}

#[test]
fn downloads_count_the_bytes_read_back() {
    let Some(gpu) = own_gpu(wgpu::Features::empty()) else { return };
    let buf = gpu.upload(&(0..1000u32).collect::<Vec<_>>()).unwrap();
    let t0 = gpu.transfers();
    assert_eq!(gpu.download(&buf).unwrap().len(), 1000);
    assert_eq!(gpu.download_range(&buf, 10..20).unwrap(), (10..20).collect::<Vec<u32>>());
    assert!(gpu.download_range(&buf, 0..0).unwrap().is_empty());
    let d = gpu.transfers() - t0;
    assert_eq!(d.downloads, traffic(2, 4000 + 40), "the empty range reads nothing");
    assert_eq!(d.uploads, Traffic::default());
    // A range of bytes is read in whole words.
    let small = gpu.upload(&[1u8, 2, 3, 4, 5, 6]).unwrap();
    let t1 = gpu.transfers();
    assert_eq!(gpu.download_range(&small, 1..3).unwrap(), vec![2, 3]);
    assert_eq!((gpu.transfers() - t1).downloads, traffic(1, 4));
}

#[test]
fn device_work_moves_nothing_but_timestamps() {
    let Some(gpu) = own_gpu(wgpu::Features::empty()) else { return };
    let src = gpu.upload(&[[1u32; 4]; 4096]).unwrap();
    let dst = gpu.zeroed::<[u32; 4]>(4096).unwrap();
    // Compile first: the copy kernel's first use is no transfer either, but keep it apart.
    gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main").unwrap();
    let t0 = gpu.transfers();
    let mut rec = gpu.recorder();
    CopyKernel::record_into(&mut rec, &src, &dst).unwrap();
    rec.copy(&dst, &src).unwrap();
    rec.clear(&dst);
    let timings = rec.submit().unwrap();
    let d = gpu.transfers() - t0;
    assert_eq!((d.uploads, d.downloads), (Traffic::default(), Traffic::default()));
    // Timing by timestamps reads the queries back once per submission: two per pass.
    match timings.source {
        lumbre_gpu::TimingSource::Timestamps => assert_eq!(d.timestamps, traffic(1, 16)),
        lumbre_gpu::TimingSource::WallClock => assert_eq!(d.timestamps, Traffic::default()),
    }
    assert_eq!(d.read_back(), d.timestamps);
}

#[test]
fn clones_share_the_counters_and_a_whole_gpu_path_is_one_up_one_down() {
    let Some(gpu) = own_gpu(wgpu::Features::empty()) else { return };
    let clone = gpu.clone();
    let data = vec![[3u32; 4]; 500];
    let t0 = gpu.transfers();
    assert_eq!(CopyKernel.gpu(&clone, &data).unwrap(), data);
    let d = gpu.transfers() - t0;
    assert_eq!(d.uploads, traffic(1, 8000), "the input, once");
    assert_eq!(d.downloads, traffic(1, 8000), "the output, once");
    assert_eq!(clone.transfers(), gpu.transfers());
    // Another context has counters of its own.
    let Some(other) = own_gpu(wgpu::Features::empty()) else { return };
    assert_eq!(other.transfers(), Transfers::default());
    // The summary names both directions.
    let text = d.to_string();
    assert!(text.starts_with("up 1 call, 7.8 KiB; down 1 call, 7.8 KiB"), "{text}");
}
