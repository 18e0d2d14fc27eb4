// Opens the page in headless Chromium, embeds the texts of a JSON file, prints {vectors, ...} as JSON.
//   node drive.mjs http://127.0.0.1:PORT/ model.tflite texts.json [chromium path] [latency runs]
import { readFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [pageUrl, modelUrl, textsFile, browserPath = "/usr/bin/chromium", runs = "0"] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(textsFile, "utf-8"));
const browser = await puppeteer.launch({
  executablePath: browserPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (message) => logs.push(message.text()));
  page.on("pageerror", (error) => logs.push(`page error: ${error}`));
  await page.goto(pageUrl, { waitUntil: "load" });
  const result = await page.evaluate(async (modelUrl, texts, runs) => {
    const { loadEmbedder, embedTexts, medianEmbedMs } = await import("./embed.mjs");
    const start = performance.now();
    await loadEmbedder(modelUrl);
    const loadMs = performance.now() - start;
    const vectors = embedTexts(texts);
    const longest = texts.reduce((a, b) => (b.length > a.length ? b : a));
    return { vectors, loadMs, medianEmbedMs: runs > 0 ? medianEmbedMs(longest, runs) : null,
             userAgent: navigator.userAgent };
  }, modelUrl, texts, Number(runs));
  result.logs = logs;
  process.stdout.write(JSON.stringify(result));
} finally {
  await browser.close();
}
