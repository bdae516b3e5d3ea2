// Appended to a copy of the plot page by tests/browser/plot_in_chromium.sh (the page itself
// has no script): checks what only a browser can tell, the layout and the CSS window
// picker, and writes the answers into the page as key=value lines in a pre element whose
// id is "probe", which `chromium --dump-dom` prints.
(() => {
  const out = [];
  const shown = () =>
    [...document.querySelectorAll('.window')]
      .filter((w) => getComputedStyle(w).display !== 'none')
      .map((w) => w.id);
  out.push('visible_windows=' + shown().join(','));
  const labels = document.querySelectorAll('.window-picker label');
  out.push('picker_labels=' + labels.length);

  // Text in the charts shown: no two x tick labels of one line overlap, and no text runs
  // past its chart's edges (legends, titles, marker and tick labels).
  let charts = 0, tickLabels = 0, overlaps = 0, outside = 0;
  const drawn = [...document.querySelectorAll('svg.chart, svg.heatmap, svg.colour-scale')]
    .filter((s) => s.getBoundingClientRect().width > 0);
  for (const svg of drawn) {
    ++charts;
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 ||
          r.bottom > box.bottom + 1) {
        ++outside;
        out.push('outside: ' + t.textContent);
      }
    }
    for (const sel of ['.tick-x text:not(.tick-context)', '.tick-x text.tick-context']) {
      const rs = [...svg.querySelectorAll(sel)]
        .map((t) => t.getBoundingClientRect())
        .sort((a, b) => a.left - b.left);
      tickLabels += rs.length;
      for (let i = 1; i < rs.length; ++i) if (rs[i].left < rs[i - 1].right + 2) ++overlaps;
    }
  }
  out.push('charts_drawn=' + charts, 'tick_labels=' + tickLabels,
           'tick_overlaps=' + overlaps, 'text_outside=' + outside);

  // The model's line in the window shown: one point per forecast step.
  const visible = document.querySelector('#' + shown()[0]);
  const model = visible && visible.querySelector("path.line[data-series='attnfc']");
  out.push('model_points=' + (model ? model.getAttribute('d').split(/[ML]/).length - 1 : 0));
  const box = model ? model.getBoundingClientRect() : {width: 0, height: 0};
  out.push('model_line_px=' + Math.round(box.width) + 'x' + Math.round(box.height));

  // The picker: its first label shows the first window, and only it.
  labels[0].click();
  out.push('after_click_first=' + shown().join(','));

  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = '\n' + out.join('\n') + '\n';
  document.body.appendChild(pre);
})();
