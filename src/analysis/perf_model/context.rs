//! What a model may need besides the op's own recorded arguments: inference
//! attention reads the per-step sequence statistics vLLM and SGLang write in
//! the step's annotation (`execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)`),
//! because a paged KV cache's shape says nothing about the context lengths;
//! MoE pseudo ops read their kernel's name and the top-k of the routing.

/// The surroundings of one op invocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpContext<'a> {
    /// The name of the iteration annotation the invocation ran under (for a
    /// graph-replayed op: the one around the graph launch), if any.
    pub annotation: Option<&'a str>,
    /// The name of the first kernel the invocation ran (a MoE pseudo op's
    /// weight type and gating are in it).
    pub kernel: Option<&'a str>,
    /// The k of the `TopK` routing op under a MoE op, for its pseudo ops.
    pub topk: Option<u64>,
}

/// Sequence statistics of one inference step, from its annotation: for
/// prefill (context) and decode (generation) requests, the summed query
/// lengths `sq`, key lengths `sk` and the sums of `sq·sq` and `sq·sk`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Context (prefill) requests: Σsq, Σsk, Σsq², Σsq·sk.
    pub context: [u64; 4],
    /// Generation (decode) requests: Σsq, Σsk, Σsq², Σsq·sk.
    pub generation: [u64; 4],
}

/// Reads the statistics of an annotation such as
/// `execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)`;
/// `None` when the text is not one.
pub fn chunk_stats(annotation: &str) -> Option<ChunkStats> {
    let section = |marker: &str| -> Option<[u64; 4]> {
        let rest = &annotation[annotation.find(marker)? + marker.len()..];
        let open = rest.find('(')?;
        let close = rest[open..].find(')')? + open;
        parse_fields(&rest[open + 1..close])
    };
    Some(ChunkStats {
        context: section("context_")?,
        generation: section("generation_")?,
    })
}

/// `sq0sk0sqsq0sqsk0` → `[sq, sk, sqsq, sqsk]` (each key once, in any order).
fn parse_fields(text: &str) -> Option<[u64; 4]> {
    let mut values: [Option<u64>; 4] = [None; 4];
    let mut rest = text;
    while !rest.is_empty() {
        let key_end = rest.find(|c: char| c.is_ascii_digit())?;
        let (key, tail) = rest.split_at(key_end);
        let value_end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let value: u64 = tail[..value_end].parse().ok()?;
        let slot = match key {
            "sq" => 0,
            "sk" => 1,
            "sqsq" => 2,
            "sqsk" => 3,
            _ => return None,
        };
        if values[slot].replace(value).is_some() {
            return None;
        }
        rest = &tail[value_end..];
    }
    Some([values[0]?, values[1]?, values[2]?, values[3]?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_and_sglang_step_annotations() {
        let stats = chunk_stats(
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
        )
        .expect("parsed");
        assert_eq!(stats.context, [0, 0, 0, 0]);
        assert_eq!(stats.generation, [32, 55086, 32, 55086]);
        assert_eq!(chunk_stats("step[DECODE bs=32]"), None);
        assert_eq!(
            chunk_stats("execute_1_context_1(sq4)_generation_0(sq0sk0sqsq0sqsk0)"),
            None
        );
        assert_eq!(chunk_stats("ProfilerStep#3"), None);
        // The sections are found wherever they are.
        let stats = chunk_stats("context_1(sq4sk4sqsq16sqsk16)_generation_0(sq0sk0sqsq0sqsk0)")
            .expect("parsed");
        assert_eq!(stats.context, [4, 4, 16, 16]);
    }
}
