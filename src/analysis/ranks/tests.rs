use super::collective::{Collective, dtype_bytes, message_bytes};
use super::*;

/// An all-reduce of 1 Mi bf16 elements (2 MiB) on stream 7 of process group 0.
fn all_reduce(start_us: f64, duration_us: f64, seq: Option<i64>) -> CommKernel {
    CommKernel {
        start_us,
        duration_us,
        stream: Some(7),
        kernel: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL".to_string(),
        collective: Collective::AllReduce,
        process_group: Some("0".to_string()),
        seq,
        bytes: Some(2 << 20),
        dtype: Some("BFloat16".to_string()),
        group_size: Some(4),
    }
}

/// Four ranks, three all-reduces 1000 µs apart; `delay` µs late on `late`.
fn job(late: Option<u32>, delay: f64, seq: bool) -> Vec<RankInput> {
    (0..4)
        .map(|rank| RankInput {
            rank,
            source: format!("rank{rank}.json"),
            kernels: (0..3)
                .map(|i| {
                    let start = 1000.0 * f64::from(i);
                    let seq = seq.then_some(i64::from(i) + 1);
                    if Some(rank) == late {
                        all_reduce(start + delay, 100.0, seq)
                    } else {
                        all_reduce(start, 100.0 + delay, seq)
                    }
                })
                .collect(),
        })
        .collect()
}

#[test]
fn the_late_rank_is_the_straggler_and_its_cost_is_exact() {
    for seq in [true, false] {
        let set = analyse(&job(Some(2), 50.0, seq));
        assert_eq!(set.instances.len(), 3);
        assert_eq!(set.unmatched, 0);
        for instance in &set.instances {
            assert_eq!(instance.skew_us, 50.0);
            assert_eq!(instance.last, Some(2));
            assert_eq!(instance.duration_us, 100.0);
            let waits: Vec<f64> = instance.arrivals.iter().map(|a| a.wait_us).collect();
            assert_eq!(waits, [50.0, 50.0, 0.0, 50.0]);
        }
        let late = &set.stragglers[2];
        assert_eq!((late.rank, late.collectives, late.last), (2, 3, 3));
        assert_eq!(late.caused_wait_us, 450.0);
        assert_eq!(late.waited_us, 0.0);
        for row in set.stragglers.iter().filter(|r| r.rank != 2) {
            assert_eq!(
                (row.last, row.caused_wait_us, row.waited_us),
                (0, 0.0, 150.0)
            );
        }
        let row = &set.collectives[0];
        assert_eq!(row.collective, Collective::AllReduce);
        assert_eq!((row.count, row.group_size), (3, 4));
        assert_eq!((row.total_us, row.mean_us), (300.0, 100.0));
        assert_eq!((row.mean_skew_us, row.max_skew_us), (50.0, 50.0));
        assert_eq!(row.bytes, Some(3 * (2 << 20)));
        // 2 MiB in 100 µs; all-reduce on 4 ranks carries 2·3/4 of it per link.
        let algbw = row.algbw_gbps.unwrap();
        assert!((algbw - 20.97152).abs() < 1e-9, "{algbw}");
        assert!((row.busbw_gbps.unwrap() - algbw * 1.5).abs() < 1e-9);
    }
}

#[test]
fn identical_ranks_have_no_skew_and_no_straggler() {
    let set = analyse(&job(None, 0.0, false));
    assert!(
        set.instances
            .iter()
            .all(|i| i.skew_us == 0.0 && i.last.is_none())
    );
    assert!(
        set.stragglers
            .iter()
            .all(|r| r.last == 0 && r.caused_wait_us == 0.0 && r.waited_us == 0.0)
    );
}

#[test]
fn seq_matches_across_a_missing_call_where_order_cannot() {
    let mut ranks = job(Some(1), 10.0, true);
    // Rank 3's trace starts after the first all-reduce.
    ranks[3].kernels.remove(0);
    let set = analyse(&ranks);
    assert_eq!(set.instances.len(), 3);
    assert!(set.instances.iter().all(|i| i.skew_us == 10.0));
    assert_eq!(set.instances[0].arrivals.len(), 3);
    assert_eq!(set.unmatched, 0);
}

#[test]
fn without_process_groups_streams_match_by_first_use_not_by_id() {
    let mut ranks = job(Some(0), 20.0, false);
    for (rank, input) in ranks.iter_mut().enumerate() {
        for kernel in &mut input.kernels {
            kernel.process_group = None;
            kernel.stream = Some(20 + rank as i64);
        }
    }
    let set = analyse(&ranks);
    assert_eq!(set.instances.len(), 3);
    assert!(set.instances.iter().all(|i| i.group == "comm stream 0"));
    assert_eq!(set.stragglers[0].caused_wait_us, 3.0 * 3.0 * 20.0);
}

#[test]
fn a_call_on_one_rank_only_is_unmatched() {
    let mut ranks = job(None, 0.0, false);
    ranks.truncate(1);
    let set = analyse(&ranks);
    assert!(set.instances.is_empty());
    assert_eq!(set.unmatched, 3);
}

#[test]
fn collectives_are_named_from_kineto_and_from_kernels() {
    for (recorded, kind) in [
        ("allreduce", Collective::AllReduce),
        ("_allgather_base", Collective::AllGather),
        ("all_gather_into_tensor_coalesced", Collective::AllGather),
        ("reduce_scatter_tensor", Collective::ReduceScatter),
        ("all_to_allv", Collective::AllToAll),
        ("broadcast", Collective::Broadcast),
        ("reduce", Collective::Reduce),
        ("send", Collective::SendRecv),
        ("barrier", Collective::Other),
    ] {
        assert_eq!(Collective::from_recorded(recorded), kind, "{recorded}");
    }
    for (kernel, kind) in [
        (
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
            Collective::AllReduce,
        ),
        (
            "ncclKernel_AllGather_RING_LL_Sum_int8_t",
            Collective::AllGather,
        ),
        (
            "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
            Collective::ReduceScatter,
        ),
        ("ncclDevKernel_Reduce_Sum_f32_RING_LL", Collective::Reduce),
        (
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
            Collective::SendRecv,
        ),
        (
            "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>",
            Collective::AllReduce,
        ),
        ("all_to_all_dispatch", Collective::AllToAll),
    ] {
        assert_eq!(Collective::from_kernel(kernel), kind, "{kernel}");
    }
    // Custom all-reduce kernels (vLLM, SGLang, aiter, quick all-reduce,
    // symmetric memory) are communication and all-reduces.
    for kernel in [
        "void vllm::cross_device_reduce_2stage<c10::BFloat16, 8>",
        "void sglang::cross_device_reduce_1stage<__nv_bfloat16, 4>",
        "void aiter::cross_device_reduce_1stage_naive<__hip_bfloat16, 8>",
        "void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP, false>",
        "vllm::all_reduce",
        "symm_mem::multimem_all_reduce_",
        "void c10d::symmetric_memory::multimem_all_reduce_kernel<__nv_bfloat16, 16>",
    ] {
        assert!(crate::analysis::comm::is_comm_kernel(kernel), "{kernel}");
        assert_eq!(
            Collective::from_kernel(kernel),
            Collective::AllReduce,
            "{kernel}"
        );
    }
}

#[test]
fn bus_factors_and_message_sizes_follow_nccl_tests() {
    assert_eq!(Collective::AllReduce.bus_factor(8), Some(1.75));
    assert_eq!(Collective::AllGather.bus_factor(4), Some(0.75));
    assert_eq!(Collective::ReduceScatter.bus_factor(2), Some(0.5));
    assert_eq!(Collective::AllToAll.bus_factor(4), Some(0.75));
    assert_eq!(Collective::Broadcast.bus_factor(8), Some(1.0));
    assert_eq!(Collective::Other.bus_factor(8), None);
    assert_eq!(dtype_bytes("BFloat16"), Some(2));
    assert_eq!(dtype_bytes("Float8_e4m3fn"), Some(1));
    assert_eq!(dtype_bytes("mystery"), None);
    // All-gather: 256 elements in, 1024 out (4 ranks): the output counts.
    assert_eq!(message_bytes(Some(256), Some(1024), "Float"), Some(4096));
    assert_eq!(message_bytes(None, None, "Float"), None);
    assert_eq!(message_bytes(Some(-1), None, "Float"), None);
}

fn context(rank: u32, gpu: Option<&str>) -> RankContext {
    let catalog = crate::analysis::hardware::builtin_catalog();
    RankContext {
        rank,
        hardware: gpu.map(|name| catalog.by_name(name).unwrap().clone()),
        comm_time: CommTime::default(),
    }
}

#[test]
fn bus_bandwidth_is_a_percentage_of_the_link_when_every_gpu_is_known() {
    let ranks = job(None, 0.0, true);
    let h100: Vec<RankContext> = (0..4).map(|r| context(r, Some("H100 SXM"))).collect();
    let set = analyse_with(&ranks, &h100);
    let row = &set.collectives[0];
    let busbw = row.busbw_gbps.unwrap();
    let pct = row.busbw_link_pct.unwrap();
    assert!((pct - busbw / 450.0 * 100.0).abs() < 1e-12, "{pct}");
    assert_eq!(set.link.hardware.as_deref(), Some("H100 SXM"));
    assert_eq!(set.link.link.as_ref().unwrap().name, "NVLink 4");
    assert_eq!(set.link.network.as_ref().unwrap().gb_s, 50.0);
    assert_eq!(
        set.link.note,
        "% of link: bus bandwidth over H100 SXM's NVLink 4 peak, 450 GB/s per direction"
    );
    assert_eq!(set.ranks[1].hardware.as_deref(), Some("H100 SXM"));

    let mut partly = h100.clone();
    partly[2] = context(2, None);
    let set = analyse_with(&ranks, &partly);
    assert_eq!(set.collectives[0].busbw_link_pct, None);
    assert_eq!(
        set.link.note,
        "no link percentage: the GPU of rank 2 is not in the hardware catalog"
    );
    let set = analyse(&ranks);
    assert_eq!(set.collectives[0].busbw_link_pct, None);
    assert!(
        set.link.note.contains("no rank's GPU is in"),
        "{}",
        set.link.note
    );
    assert_eq!(set.ranks[0].comm_time, None);

    let mut mixed = h100.clone();
    mixed[3] = context(3, Some("MI300X"));
    let set = analyse_with(&ranks, &mixed);
    assert_eq!(
        set.link.note,
        "no link percentage: the ranks ran on different GPUs (H100 SXM, MI300X)"
    );
    let pcie: Vec<RankContext> = (0..4).map(|r| context(r, Some("H100 PCIe"))).collect();
    let set = analyse_with(&ranks, &pcie);
    assert_eq!(set.link.hardware.as_deref(), Some("H100 PCIe"));
    assert!(
        set.link
            .note
            .contains("lists no intra-node link for H100 PCIe")
    );
}

#[test]
fn the_first_to_arrive_and_each_ranks_kernel_time_are_counted() {
    let set = analyse(&job(Some(2), 50.0, true));
    let firsts: Vec<u64> = set.stragglers.iter().map(|r| r.first).collect();
    // Ranks 0, 1 and 3 arrive together; the lowest of them counts.
    assert_eq!(firsts, [3, 0, 0, 0]);
    let kernel_us: Vec<f64> = set.stragglers.iter().map(|r| r.comm_kernel_us).collect();
    assert_eq!(kernel_us, [450.0, 450.0, 300.0, 450.0]);
    let even = analyse(&job(None, 0.0, true));
    assert!(even.stragglers.iter().all(|r| r.first == 0));
}
