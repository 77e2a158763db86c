// The console's progressive enhancements; every page works without them.
"use strict";

// Copy buttons: data-copy names the input whose value they copy.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    const input = document.getElementById(button.dataset.copy);
    if (!input) return;
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Press Ctrl+C to copy";
    }
  });
}

// Forms that undo something ask first.
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// The usage chart, drawn with uPlot (loaded on demand) from the numbers the page carries.
const data = document.getElementById("usage-data");
const area = document.getElementById("usage-chart");
if (data && area) {
  const usage = JSON.parse(data.textContent);
  const style = document.createElement("link");
  style.rel = "stylesheet";
  style.href = "/console/assets/uplot.css";
  document.head.appendChild(style);
  const script = document.createElement("script");
  script.src = "/console/assets/uplot.js";
  script.onload = () => {
    const css = getComputedStyle(document.documentElement);
    const width = () => Math.max(260, area.clientWidth);
    const bars = window.uPlot.paths.bars({ size: [0.6, 40] });
    const chart = new window.uPlot({
      width: width(),
      height: 240,
      legend: { show: false },
      scales: { x: { time: false, auto: false, range: [-0.5, usage.labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(5, Math.ceil(max * 1.15))] } },
      axes: [{ incrs: [1, 2, 5, 7], values: (_u, splits) => splits.map((i) => usage.labels[i] ?? "") }, { size: 50 }],
      series: [
        {},
        { label: "Plate queries", stroke: css.getPropertyValue("--plate").trim(), fill: "rgba(29, 78, 216, 0.25)", paths: bars },
        { label: "Module queries", stroke: css.getPropertyValue("--module").trim(), width: 2, points: { size: 6 } }
      ]
    }, [usage.labels.map((_label, i) => i), usage.plateQueries, usage.moduleQueries], area);
    area.dataset.ready = "true";
    new ResizeObserver(() => chart.setSize({ width: width(), height: 240 })).observe(area);
  };
  document.head.appendChild(script);
}
