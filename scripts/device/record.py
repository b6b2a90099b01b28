"""Record profiler traces of one small transformer in every mode, in one process.

Run by scripts/device/record-all (on a GPU machine); the traces it wrote are
in tests/fixtures/h200/ with their README. For one model (`bert`: BERT-base
widths, or `llama`: a Llama-style decoder with grouped-query attention, both
with two layers and random weights built from a transformers config) and
each mode (`eager`, `compiled`: torch.compile's default, `graph`:
torch.compile mode="reduce-overhead", i.e. CUDA graphs) and task (`infer`:
a no-grad forward in bf16, `train`: a forward, backward and AdamW step under
bf16 autocast with fp32 weights), it warms up, then profiles one warm-up and
five active steps with record_shapes=True, one ProfilerStep#N per step. For
the graph mode it also profiles the graphs' capture, in a trace of its own
(`--capture` of `tracegate report` and `check`): the second call, the first
running the CUDA graph trees' warm-up.
"""

import argparse
import gzip
import os
import shutil
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

WARMUP_CALLS = 3
ACTIVE_STEPS = 5


def build(model_name, task, device):
    """A fresh model with the same random weights in every process."""
    import transformers

    torch.manual_seed(0)
    if model_name == "bert":
        config = transformers.BertConfig(num_hidden_layers=2)  # BERT-base widths
        model = transformers.BertForMaskedLM(config)
        batch, seq, vocab = 8, 128, config.vocab_size
    else:
        config = transformers.LlamaConfig(
            hidden_size=1024,
            intermediate_size=2816,
            num_hidden_layers=2,
            num_attention_heads=16,
            num_key_value_heads=4,
            vocab_size=32000,
            max_position_embeddings=1024,
        )
        model = transformers.LlamaForCausalLM(config)
        batch, seq, vocab = 4, 256, config.vocab_size
    model = model.to(device)
    if task == "infer":
        model = model.to(torch.bfloat16).eval()
    else:
        model.train()
    generator = torch.Generator(device=device).manual_seed(1)
    input_ids = torch.randint(0, vocab, (batch, seq), device=device, generator=generator)
    return model, input_ids


def step_function(model, input_ids, task, mode):
    if mode == "compiled":
        model_call = torch.compile(model)
    elif mode == "graph":
        model_call = torch.compile(model, mode="reduce-overhead")
    else:
        model_call = model
    if task == "infer":

        def step():
            with torch.no_grad():
                return model_call(input_ids=input_ids).logits

        return step
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        with torch.autocast(input_ids.device.type, dtype=torch.bfloat16):
            loss = model_call(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def synchronize():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def export(prof, path):
    raw = path[: -len(".gz")]
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as source, gzip.open(path, "wb", compresslevel=9) as target:
        shutil.copyfileobj(source, target)
    os.remove(raw)


def record(step, path):
    """One warm-up and ACTIVE_STEPS active steps, each a ProfilerStep#N."""
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        record_shapes=True,
        schedule=schedule(wait=0, warmup=1, active=ACTIVE_STEPS, repeat=1),
    ) as prof:
        for _ in range(1 + ACTIVE_STEPS):
            step()
            prof.step()
    synchronize()
    export(prof, path)


def record_capture(step, path):
    """The CUDA graphs' capture: the second call (the first runs the CUDA
    graph trees' warm-up), alone in its trace, as vLLM and SGLang write one."""
    step()
    synchronize()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        record_shapes=True,
    ) as prof:
        step()
        synchronize()
    export(prof, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["bert", "llama"], required=True)
    parser.add_argument("--run", type=int, required=True, help="run number, in the file names")
    parser.add_argument("--out", required=True, help="folder for the traces")
    parser.add_argument("--device", default="cuda", help="torch device (cpu only to try the script)")
    parser.add_argument("--no-trace", action="store_true", help="compile and run only (fills the compile cache)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for task in ("infer", "train"):
        for mode in ("eager", "compiled", "graph"):
            started = time.monotonic()
            torch._dynamo.reset()
            model, input_ids = build(args.model, task, args.device)
            step = step_function(model, input_ids, task, mode)
            if mode == "graph" and not args.no_trace:
                name = f"{args.model}-{task}-graph_capture-run{args.run}.json.gz"
                record_capture(step, os.path.join(args.out, name))
            for _ in range(WARMUP_CALLS):
                step()
            synchronize()
            if not args.no_trace:
                name = f"{args.model}-{task}-{mode}-run{args.run}.json.gz"
                record(step, os.path.join(args.out, name))
            del model, step
            print(f"{args.model} run{args.run} {task} {mode}: {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
