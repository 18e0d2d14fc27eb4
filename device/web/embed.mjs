// MediaPipe's web TextEmbedder on a keras_subembed MediaPipe file: raw strings in, vectors out.
// The wasm files come from the npm package, served beside this page (no CDN).
import { FilesetResolver, TextEmbedder } from "./node_modules/@mediapipe/tasks-text/text_bundle.mjs";

const WASM = new URL("./node_modules/@mediapipe/tasks-text/wasm", import.meta.url).href;
let embedder = null;

// Loads the .tflite file at `modelUrl`; raw vectors, as Python's verification reads them.
export async function loadEmbedder(modelUrl) {
  const fileset = await FilesetResolver.forTextTasks(WASM);
  if (embedder) embedder.close();
  embedder = await TextEmbedder.createFromOptions(fileset, {
    baseOptions: { modelAssetPath: modelUrl },
    l2Normalize: false,
    quantize: false,
  });
}

// One float array per text; timings (ms per embed call) beside them.
export function embedTexts(texts) {
  if (!embedder) throw new Error("call loadEmbedder(modelUrl) first");
  return texts.map((text) => Array.from(embedder.embed(text).embeddings[0].floatEmbedding));
}

// drive.mjs's name for it: every page module embeds its own kind of input.
export const embedInputs = embedTexts;

export function medianEmbedMs(text, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    embedder.embed(text);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
