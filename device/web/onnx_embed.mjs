// ONNX Runtime Web on an .onnx file from export_onnx: token ids in (the model's own tokenizer ran
// in Python or in the app), vectors out. The wasm files come from the npm package, served beside
// this page (no CDN).
import * as ort from "./node_modules/onnxruntime-web/dist/ort.wasm.min.mjs";

ort.env.wasm.wasmPaths = new URL("./node_modules/onnxruntime-web/dist/", import.meta.url).href;
// Threads need SharedArrayBuffer, which a page gets only when cross-origin isolated
// (COOP/COEP headers); elsewhere the wasm runs on one thread instead of failing to start.
ort.env.wasm.numThreads = globalThis.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
let session = null;

// Loads the .onnx file at `modelUrl` with the wasm (CPU) backend.
export async function loadEmbedder(modelUrl) {
  if (session) await session.release();
  session = await ort.InferenceSession.create(modelUrl, { executionProviders: ["wasm"] });
  return { inputNames: session.inputNames, outputNames: session.outputNames };
}

// `input`: {input name: {dtype: "int32" | "int64", dims: [1, length], data: [ids...]}}.
function feeds(input) {
  const tensors = {};
  for (const [name, { dtype, dims, data }] of Object.entries(input)) {
    const values = dtype === "int64" ? BigInt64Array.from(data, BigInt) : Int32Array.from(data);
    tensors[name] = new ort.Tensor(dtype, values, dims);
  }
  return tensors;
}

// The first output of each input (e.g. `embedding`), one float array per row.
export async function embedInputs(inputs) {
  if (!session) throw new Error("call loadEmbedder(modelUrl) first");
  const vectors = [];
  for (const input of inputs) {
    const output = (await session.run(feeds(input)))[session.outputNames[0]];
    const width = output.dims[output.dims.length - 1];
    for (let row = 0; row < output.data.length / width; row++) {
      vectors.push(Array.from(output.data.subarray(row * width, (row + 1) * width)));
    }
  }
  return vectors;
}

export async function medianEmbedMs(input, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await session.run(feeds(input));
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
