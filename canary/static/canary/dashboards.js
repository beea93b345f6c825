/* Canary dashboards: draw the charts declared in the page.
 *
 * A chart is a <canvas data-chart="KIND" data-source="ID"> whose data sits in a
 * <script type="application/json" id="ID"> (Django's json_script). Chart.js is vendored
 * (static/canary/vendor/chartjs): no CDN, so pages work on deployments without internet.
 * Without Chart.js or JavaScript the tables on the same pages still say everything.
 */
(function () {
  "use strict";

  var VERDICT_COLOURS = {
    pass: "#5cb85c",
    fail: "#d9534f",
    inconclusive: "#f0ad4e",
    transport_error: "#7fa7d1",
    not_applicable: "#9e9e9e"
  };

  function readData(canvas) {
    var el = document.getElementById(canvas.dataset.source);
    return el ? JSON.parse(el.textContent) : null;
  }

  // Times are epoch milliseconds; staff read UTC everywhere in the admin.
  function utcLabel(ms) {
    var iso = new Date(ms).toISOString();
    return iso.slice(5, 10) + " " + iso.slice(11, 16);
  }

  function textColour() {
    return getComputedStyle(document.body).getPropertyValue("--body-quiet-color").trim() || "#666";
  }

  function ttftChart(canvas, data) {
    var capped = data.capped || [];
    var xs = data.points.concat(capped, data.fleet).map(function (p) { return p.x; });
    var xmin = Math.min.apply(null, xs.length ? xs : [0]);
    var xmax = Math.max.apply(null, xs.length ? xs : [1]);
    // The limit line is always drawn: "how far from the limit" is the question the chart
    // answers, and failing probes sit on it.
    return new Chart(canvas, {
      type: "line",
      data: {
        datasets: [
          {
            label: "TTFT (ms)",
            data: data.points,
            borderColor: "#417690",
            borderWidth: 1,
            pointRadius: data.points.map(function (p) { return p.v === "fail" ? 4 : 2.5; }),
            pointStyle: data.points.map(function (p) { return p.v === "fail" ? "triangle" : "circle"; }),
            pointBackgroundColor: data.points.map(function (p) { return VERDICT_COLOURS[p.v] || "#417690"; }),
            pointBorderColor: data.points.map(function (p) { return VERDICT_COLOURS[p.v] || "#417690"; }),
            tension: 0
          },
          {
            label: "failed, no first token (drawn at the limit)",
            data: capped,
            showLine: false,
            pointStyle: "crossRot",
            pointRadius: 6,
            pointBorderWidth: 2,
            borderColor: VERDICT_COLOURS.fail,
            backgroundColor: VERDICT_COLOURS.fail
          },
          {
            label: "fleet mean (ms)",
            data: data.fleet,
            borderColor: "#999",
            borderDash: [4, 4],
            borderWidth: 1,
            pointRadius: 0
          },
          {
            label: "limit (" + data.limit_ms + " ms)",
            data: [{ x: xmin, y: data.limit_ms }, { x: xmax, y: data.limit_ms }],
            borderColor: VERDICT_COLOURS.fail,
            borderWidth: 1.5,
            pointRadius: 0
          }
        ]
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: true,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", ticks: { callback: utcLabel, maxTicksLimit: 10, color: textColour() } },
          y: { beginAtZero: true, title: { display: true, text: "ms", color: textColour() }, ticks: { color: textColour() } }
        },
        plugins: {
          legend: { labels: { color: textColour() } },
          tooltip: {
            callbacks: {
              title: function (items) { return items.length ? utcLabel(items[0].parsed.x) + " UTC" : ""; },
              label: function (item) {
                var raw = item.raw || {};
                return item.dataset.label + ": " + Math.round(item.parsed.y) + (raw.v ? " (" + raw.v + ")" : "");
              }
            }
          }
        }
      }
    });
  }

  function observeChart(canvas, data) {
    return new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.days,
        datasets: [
          { label: "would suspend", data: data.confirmed, backgroundColor: "#b39ddb" },
          { label: "marked false positive", data: data.false_positive, backgroundColor: "#f0ad4e" }
        ]
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true, ticks: { color: textColour() } },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0, color: textColour() } }
        },
        plugins: { legend: { labels: { color: textColour() } } }
      }
    });
  }

  var KINDS = { ttft: ttftChart, observe: observeChart };

  function drawAll() {
    if (typeof window.Chart === "undefined") {
      return;
    }
    document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var draw = KINDS[canvas.dataset.chart];
      var data = readData(canvas);
      if (!draw || !data) {
        return;
      }
      draw(canvas, data);
      // Lets tests and people tell a drawn chart from an empty canvas.
      canvas.dataset.rendered = "true";
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
