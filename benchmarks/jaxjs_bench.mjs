// One workload (W1-W5 of shared/bench/WORKLOADS.md) on jax-js's Wasm backend under Node.
//
//   node jaxjs_bench.mjs '{"name": "W3", "shapes": [[1024, 1024], [1024, 1024]], "repeats": 5}'
//
// @jax-js/jax is loaded from $JAXJS_DIR (a folder filled by `npm install --prefix`), so nothing
// is installed into the repo. Every result is checked against a plain-JS reference before it is
// timed. Prints one JSON line
// {"name", "seconds", "compile_s"}: seconds is the median of the warm runs, each timed until
// the result is ready (jax-js is lazy, so blockUntilReady is inside the timing).
import path from "node:path";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(process.argv[2]);
const entry = path.join(process.env.JAXJS_DIR, "node_modules/@jax-js/jax/dist/index.js");
const jax = await import(pathToFileURL(entry).href);
const { numpy: np, lax, nn, jit, valueAndGrad, blockUntilReady } = jax;
await jax.init("wasm"); // under Node 20 the default init() probes backends it cannot start
jax.defaultDevice("wasm");

// Deterministic uniform(-1, 1) values (mulberry32); not the Python values, timing only.
function randn(shape, seed, scale = 1) {
  let s = seed >>> 0;
  const n = shape.reduce((a, b) => a * b, 1);
  const buf = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    buf[i] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  }
  return buf;
}
const arr = (buf, shape) => np.array(buf).reshape(shape);

function assertClose(what, got, want, tol) {
  if (!Number.isFinite(got) || Math.abs(got - want) > tol * (1 + Math.abs(want)))
    throw new Error(`${spec.name}: ${what} is ${got}, JS reference ${want}`);
}

// Each builder returns {run: () => output tree (args passed by .ref, so they survive),
// check: (output data) => void}. Refcounting: every jax-js call consumes its arguments.
const builders = {
  W1([shape]) {
    const xs = randn(shape, 1, 3);
    const x = arr(xs, shape);
    const f = jit((x) => np.tanh(x.ref.mul(1.5).add(0.3)).mul(np.exp(x.ref.mul(x.ref).neg())).add(np.sin(x)));
    return {
      run: () => f(x.ref),
      check: ([y]) => {
        for (let i = 0; i < xs.length; i += 4099) {
          const v = xs[i];
          assertClose(`y[${i}]`, y[i], Math.tanh(v * 1.5 + 0.3) * Math.exp(-v * v) + Math.sin(v), 1e-4);
        }
      },
    };
  },
  W2([shape]) {
    const [rows, cols] = shape;
    const xs = randn(shape, 2, 3);
    const x = arr(xs, shape);
    const f = jit((x) => {
      const e = np.exp(x.ref.sub(np.max(x, 1, { keepdims: true })));
      return e.ref.div(np.sum(e, 1, { keepdims: true }));
    });
    return {
      run: () => f(x.ref),
      check: ([y]) => {
        for (let r = 0; r < rows; r += 511) {
          const row = xs.subarray(r * cols, (r + 1) * cols);
          const m = Math.max(...row);
          const z = row.reduce((a, v) => a + Math.exp(v - m), 0);
          for (let c = 0; c < cols; c += 97)
            assertClose(`y[${r},${c}]`, y[r * cols + c], Math.exp(row[c] - m) / z, 1e-4);
        }
      },
    };
  },
  W3([sa, sb]) {
    const [n, k] = sa, m = sb[1];
    const as = randn(sa, 3), bs = randn(sb, 4);
    const a = arr(as, sa), b = arr(bs, sb);
    const f = jit((a, b) => np.matmul(a, b));
    return {
      run: () => f(a.ref, b.ref),
      check: ([c]) => {
        for (let i = 0; i < n; i += 131)
          for (let j = 0; j < m; j += 137) {
            let s = 0;
            for (let l = 0; l < k; l++) s += as[i * k + l] * bs[l * m + j];
            assertClose(`c[${i},${j}]`, c[i * m + j], s, 1e-3);
          }
      },
    };
  },
  W4(_, { layers, batch, lr }) {
    const params = [];
    for (let i = 0; i + 1 < layers.length; i++) {
      const [fi, fo] = [layers[i], layers[i + 1]];
      params.push([arr(randn([fi, fo], 10 + i, Math.sqrt(3 / fi)), [fi, fo]), np.zeros([fo])]);
    }
    const x = arr(randn([batch, layers[0]], 5), [batch, layers[0]]);
    const onehot = new Float32Array(batch * layers.at(-1));
    for (let r = 0; r < batch; r++) onehot[r * layers.at(-1) + ((r * 7) % layers.at(-1))] = 1;
    const y = arr(onehot, [batch, layers.at(-1)]);
    const loss = (params, x, y) => {
      let h = x;
      params.forEach(([w, b], i) => {
        h = np.matmul(h, w).add(b);
        if (i < params.length - 1) h = np.maximum(h, 0);
      });
      return np.mean(np.sum(nn.logSoftmax(h, 1).mul(y), 1)).neg();
    };
    const refs = (ps) => ps.map(([w, b]) => [w.ref, b.ref]);
    const step = jit((params, x, y) => {
      const [val, grads] = valueAndGrad(loss)(refs(params), x, y);
      const next = params.map(([w, b], i) => [w.sub(grads[i][0].mul(lr)), b.sub(grads[i][1].mul(lr))]);
      return [next, val];
    });
    return {
      run: () => step(refs(params), x.ref, y.ref),
      // cross-entropy of a near-uniform 10-way softmax at initialisation: about log(10)
      check: (leaves) => assertClose("loss", leaves.at(-1)[0], Math.log(layers.at(-1)), 0.5),
    };
  },
  W5([sx, sw]) {
    const [N, C, H, W] = sx, [O, , KH, KW] = sw;
    const xs = randn(sx, 6), ws = randn(sw, 7);
    const x = arr(xs, sx), w = arr(ws, sw);
    const f = jit((x, w) => lax.convGeneralDilated(x, w, [1, 1], "SAME"));
    return {
      run: () => f(x.ref, w.ref),
      check: ([y]) => {
        for (const [n, o, h, q] of [[0, 0, 0, 0], [N - 1, O - 1, H - 1, W - 1], [3, 17, 31, 40]]) {
          let s = 0;
          for (let c = 0; c < C; c++)
            for (let i = 0; i < KH; i++)
              for (let j = 0; j < KW; j++) {
                const hh = h + i - (KH >> 1), ww = q + j - (KW >> 1);
                if (hh < 0 || hh >= H || ww < 0 || ww >= W) continue;
                s += xs[((n * C + c) * H + hh) * W + ww] * ws[((o * C + c) * KH + i) * KW + j];
              }
          assertClose(`y[${n},${o},${h},${q}]`, y[((n * O + o) * H + h) * W + q], s, 1e-3);
        }
      },
    };
  },
};

const leavesOf = (t) => (Array.isArray(t) ? t.flatMap(leavesOf) : [t]);
const dispose = (t) => leavesOf(t).forEach((a) => a.dispose());

async function timed(run) {
  const t0 = performance.now();
  const out = run();
  await blockUntilReady(out);
  return [(performance.now() - t0) / 1e3, out];
}

const bench = builders[spec.name];
if (!bench) throw new Error(`jax-js: no workload ${spec.name}`);
const { run, check } = bench(spec.shapes, spec);
const [first, out] = await timed(run);
check(await Promise.all(leavesOf(out).map((a) => a.data())));
const times = [];
for (let i = 0; i < spec.repeats; i++) {
  const [t, o] = await timed(run);
  times.push(t);
  dispose(o);
}
times.sort((a, b) => a - b);
const seconds = times[times.length >> 1];
console.log(JSON.stringify({ name: spec.name, seconds, compile_s: Math.max(first - seconds, 0) }));
process.exit(0);
