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

  // Tick steps a time axis may take, in ms: whole minutes, then whole UTC hours.
  var MINUTE = 60 * 1000;
  var HOUR = 60 * MINUTE;
  var TIME_STEPS = [MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
    HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR];

  // An x axis of epoch ms from the first to the last time drawn, ticked on whole minutes
  // or UTC hours (at most maxTicks). Chart.js's linear scale would otherwise round its
  // ends out to "nice" numbers of milliseconds: the reliability charts' axis ran past the
  // open hour to a tick an hour or two ahead of now, at minutes such as :46 and :33.
  function timeAxis(xmin, xmax, maxTicks, extra) {
    if (!(xmax > xmin)) { xmin -= HOUR / 2; xmax = xmin + HOUR; }
    var step = TIME_STEPS[TIME_STEPS.length - 1];
    for (var i = 0; i < TIME_STEPS.length; i++) {
      if (Math.floor((xmax - xmin) / TIME_STEPS[i]) + 1 <= maxTicks) { step = TIME_STEPS[i]; break; }
    }
    var axis = {
      type: "linear", min: xmin, max: xmax,
      ticks: { callback: utcLabel, autoSkip: false, color: textColour() },
      // Our own ticks: Chart.js spreads a stepSize evenly over min..max when their span is
      // not a whole number of steps (its "almost whole" test compares a count with ms).
      afterBuildTicks: function (scale) { scale.ticks = timeTicks(xmin, xmax, step); }
    };
    return Object.assign(axis, extra || {});
  }

  // The multiples of step (ms since the epoch, so whole UTC minutes or hours) in [xmin, xmax].
  function timeTicks(xmin, xmax, step) {
    var ticks = [];
    for (var t = Math.ceil(xmin / step) * step; t <= xmax; t += step) { ticks.push({ value: t }); }
    return ticks;
  }

  function pointsSpan(points) {
    var xs = points.map(function (p) { return p.x; });
    return xs.length ? [Math.min.apply(null, xs), Math.max.apply(null, xs)] : [0, 0];
  }

  function textColour() {
    return getComputedStyle(document.body).getPropertyValue("--body-quiet-color").trim() || "#666";
  }

  // The y-axis top for values up to max: 1.25x, rounded up to 1, 2 or 5 times a power of ten.
  function niceTop(max) {
    if (!(max > 0)) { return 1; }
    var raw = max * 1.25;
    var step = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (raw <= steps[i] * step) { return steps[i] * step; }
    }
    return 10 * step;
  }

  // The scale follows the values: a slowdown from 150 to 800 ms must be visible even when
  // the limit is 10 s. The limit is a line when it is near the values (within 2x of the
  // highest), else the legend names it; probes with no first token sit at the top.
  function ttftScale(data) {
    var values = data.points.concat(data.fleet).map(function (p) { return p.y; });
    var highest = values.length ? Math.max.apply(null, values) : 0;
    var limitShown = !values.length || highest * 2 >= data.limit_ms;
    var top = limitShown ? niceTop(Math.max(highest, data.limit_ms)) : niceTop(highest);
    return { top: top, limitShown: limitShown };
  }

  function ttftChart(canvas, data) {
    var scale = ttftScale(data);
    canvas.dataset.yMax = String(scale.top);
    canvas.dataset.limitShown = String(scale.limitShown);
    var capped = (data.capped || []).map(function (p) { return { x: p.x, y: scale.top, v: p.v }; });
    var xs = data.points.concat(capped, data.fleet).map(function (p) { return p.x; });
    var xmin = Math.min.apply(null, xs.length ? xs : [0]);
    var xmax = Math.max.apply(null, xs.length ? xs : [1]);
    var limitLabel = scale.limitShown ? "limit (" + data.limit_ms + " ms)" : "limit " + data.limit_ms + " ms (far above these values, not drawn)";
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
            label: "failed, no first token (drawn at the top)",
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
            label: limitLabel,
            data: scale.limitShown ? [{ x: xmin, y: data.limit_ms }, { x: xmax, y: data.limit_ms }] : [],
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
          x: timeAxis(xmin, xmax, 10),
          y: { beginAtZero: true, max: scale.top, title: { display: true, text: "ms", color: textColour() }, ticks: { color: textColour() } }
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

  var SERIES_COLOURS = ["#417690", "#d9534f", "#5cb85c", "#f0ad4e", "#6f42c1", "#7fa7d1", "#8d6e63", "#26a69a"];

  function percentTick(value) { return Math.round(value * 100) + "%"; }

  // One series of a multi-series chart: the i-th colour, straight segments, gaps left
  // open (a missing hour is not a zero); extra overrides or adds options.
  function seriesDataset(label, points, i, extra) {
    var colour = SERIES_COLOURS[i % SERIES_COLOURS.length];
    return Object.assign({
      label: label,
      data: points,
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: 1.5,
      pointRadius: 2,
      spanGaps: false,
      tension: 0
    }, extra || {});
  }

  // Per probe kind, the share of the endpoint's replies failing in each round (0..1).
  function checksChart(canvas, data) {
    return new Chart(canvas, {
      type: "line",
      data: {
        datasets: data.series.map(function (s, i) {
          return seriesDataset(s.label, s.points, i, { pointRadius: s.points.map(function (p) { return p.y ? 4 : 1.5; }) });
        })
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: timeAxis.apply(null, pointsSpan([].concat.apply([], data.series.map(function (s) { return s.points; }))).concat([10])),
          y: { min: 0, max: 1, ticks: { callback: percentTick, color: textColour() }, title: { display: true, text: "replies failing", color: textColour() } }
        },
        plugins: {
          legend: { labels: { color: textColour() } },
          tooltip: {
            callbacks: {
              title: function (items) { return items.length ? utcLabel(items[0].parsed.x) + " UTC" : ""; },
              label: function (item) {
                var raw = item.raw || {};
                return item.dataset.label + ": " + percentTick(item.parsed.y) + (raw.n ? " (" + raw.k + " of " + raw.n + " replies)" : "");
              }
            }
          }
        }
      }
    });
  }

  // Hourly series per route: {"hours": [epoch ms], "routes": [{"route", "values": [..]}],
  // "unit": "percent" | "ms", "marks": [{"x", "label"}]} (marks: masking warnings).
  function routeSeriesChart(canvas, data) {
    var marks = data.marks || [];
    var datasets = data.routes.map(function (r, i) {
      return seriesDataset(r.route, data.hours.map(function (x, j) { return { x: x, y: r.values[j] }; }), i);
    });
    if (marks.length) {
      datasets.push({
        label: "masking warning",
        data: marks.map(function (m) { return { x: m.x, y: data.unit === "percent" ? 1 : null, note: m.label }; }),
        showLine: false,
        pointStyle: "triangle",
        pointRadius: 9,
        borderColor: "#d9534f",
        backgroundColor: "#d9534f"
      });
    }
    var y = data.unit === "percent"
      ? { min: 0, max: 1, ticks: { callback: percentTick, color: textColour() } }
      : { beginAtZero: true, title: { display: true, text: "ms", color: textColour() }, ticks: { color: textColour() } };
    return new Chart(canvas, {
      type: "line",
      data: { datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: "nearest", intersect: false },
        // Each point is its hour's start (the last one the open hour, until now): the axis
        // ends there, not at a rounded number past it.
        scales: { x: timeAxis(data.hours[0], data.hours[data.hours.length - 1], 12), y: y },
        plugins: {
          legend: { labels: { color: textColour() } },
          tooltip: {
            callbacks: {
              title: function (items) { return items.length ? utcLabel(items[0].parsed.x) + " UTC" : ""; },
              label: function (item) {
                var raw = item.raw || {};
                if (raw.note) { return raw.note; }
                var v = item.parsed.y;
                return item.dataset.label + ": " + (data.unit === "percent" ? percentTick(v) : Math.round(v) + " ms");
              }
            }
          }
        }
      }
    });
  }

  // Breaker state per route over time as a stepped line: closed 0, half-open 1, open 2.
  var BREAKER_LEVELS = ["closed", "half-open", "open"];

  function breakerChart(canvas, data) {
    return new Chart(canvas, {
      type: "line",
      data: {
        datasets: data.routes.map(function (r, i) {
          return seriesDataset(r.route, r.points, i, { stepped: "before", clip: false, borderWidth: 2 });
        })
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: timeAxis(data.since, data.until, 12),
          y: { min: 0, max: 2, offset: true, ticks: { stepSize: 1, callback: function (v) { return BREAKER_LEVELS[v] || ""; }, color: textColour() } }
        },
        plugins: {
          legend: { labels: { color: textColour() } },
          tooltip: {
            callbacks: {
              title: function (items) { return items.length ? utcLabel(items[0].parsed.x) + " UTC" : ""; },
              label: function (item) {
                var raw = item.raw || {};
                return item.dataset.label + ": " + (BREAKER_LEVELS[item.parsed.y] || "?") + (raw.why ? " (" + raw.why + ")" : "");
              }
            }
          }
        }
      }
    });
  }

  var KINDS = { ttft: ttftChart, observe: observeChart, checks: checksChart, routes: routeSeriesChart, breakers: breakerChart };

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
