// Opens a page in headless Chromium, embeds the inputs of a JSON file with a page module, prints
// {vectors, loadMs, medianEmbedMs, userAgent, logs, offLoopback} as JSON.
//   node drive.mjs http://127.0.0.1:PORT/page.html MODULE MODEL_URL inputs.json [chromium] [runs]
// MODULE (./embed.mjs: MediaPipe, texts; ./onnx_embed.mjs: ONNX Runtime Web, token ids) exports
// loadEmbedder(modelUrl), embedInputs(inputs) and medianEmbedMs(input, runs), sync or async.
// Every request that leaves 127.0.0.1 is refused and listed in offLoopback: the pages must
// run from what run_chromium.py serves (no CDN).
import { readFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [pageUrl, moduleUrl, modelUrl, inputsFile, browserPath = "/usr/bin/chromium", runs = "0"] =
  process.argv.slice(2);
const inputs = JSON.parse(readFileSync(inputsFile, "utf-8"));
const browser = await puppeteer.launch({
  executablePath: browserPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage();
  const logs = [];
  const offLoopback = [];
  page.on("console", (message) => logs.push(message.text()));
  page.on("pageerror", (error) => logs.push(`page error: ${error}`));
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (["data:", "blob:"].includes(url.protocol) || url.hostname === "127.0.0.1") {
      request.continue();
    } else {
      offLoopback.push(request.url());
      request.abort();
    }
  });
  await page.goto(pageUrl, { waitUntil: "load" });
  const result = await page.evaluate(async (moduleUrl, modelUrl, inputs, runs) => {
    const { loadEmbedder, embedInputs, medianEmbedMs } = await import(moduleUrl);
    const start = performance.now();
    await loadEmbedder(modelUrl);
    const loadMs = performance.now() - start;
    const vectors = await embedInputs(inputs);
    const size = (input) => (typeof input === "string" ? input.length : JSON.stringify(input).length);
    const longest = inputs.reduce((a, b) => (size(b) > size(a) ? b : a));
    return { vectors, loadMs, medianEmbedMs: runs > 0 ? await medianEmbedMs(longest, runs) : null,
             userAgent: navigator.userAgent };
  }, moduleUrl, modelUrl, inputs, Number(runs));
  result.logs = logs;
  result.offLoopback = offLoopback;
  process.stdout.write(JSON.stringify(result));
} finally {
  await browser.close();
}
