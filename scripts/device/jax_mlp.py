"""A jax.profiler trace of a small jitted MLP, for a later JAX reader.

Run by scripts/device/record-all with the output folder as the argument;
it writes TensorBoard's plugins/profile/<run>/ files (the .xplane.pb and a
Perfetto trace.json.gz) under it.
"""

import sys

import jax
import jax.numpy as jnp


def init(key, widths):
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (fan_in, fan_out), jnp.bfloat16) / fan_in**0.5,
                       jnp.zeros((fan_out,), jnp.bfloat16)))
    return params


@jax.jit
def loss(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    return jnp.mean(((x @ w + b) - y).astype(jnp.float32) ** 2)


grad = jax.jit(jax.grad(loss))


def main():
    out = sys.argv[1]
    key = jax.random.PRNGKey(0)
    params = init(key, [1024, 4096, 4096, 1024])
    x = jax.random.normal(jax.random.PRNGKey(1), (512, 1024), jnp.bfloat16)
    y = jax.random.normal(jax.random.PRNGKey(2), (512, 1024), jnp.bfloat16)
    for _ in range(3):
        jax.block_until_ready(grad(params, x, y))
    with jax.profiler.trace(out, create_perfetto_trace=True):
        for step in range(5):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                jax.block_until_ready(grad(params, x, y))
    print(jax.devices(), jax.__version__)


if __name__ == "__main__":
    main()
