/**
 * The dashboard's one client script. The server renders every panel (hono/jsx); this script only
 * re-fetches a panel's HTML when the live feed says something changed, and sends the buttons' and
 * forms' requests to the control API. Plain ES2020, no build step, no dependency.
 */
export const DASHBOARD_JS = String.raw`
(function () {
  "use strict";
  var byId = function (id) { return document.getElementById(id); };
  var state = { job: null, offset: 0, seq: {}, timers: {}, clockLoadedAt: Date.now() };
  var ALL = ["clock", "endpoints", "jobs", "job", "batches", "faults", "webhooks", "requests"];

  function formQuery(id) {
    var form = byId(id);
    var params = new URLSearchParams();
    if (!form) return params;
    new FormData(form).forEach(function (v, k) { if (typeof v === "string" && v.trim() !== "") params.set(k, v.trim()); });
    return params;
  }

  function panelQuery(panel) {
    var params = new URLSearchParams();
    if (panel === "jobs") { params = formQuery("jobs-filter"); if (state.offset) params.set("offset", String(state.offset)); }
    if (panel === "requests") params = formQuery("requests-filter");
    if (panel === "job" && state.job) params.set("id", state.job);
    var s = params.toString();
    return s ? "?" + s : "";
  }

  async function refresh(panel) {
    var body = byId(panel + "-body");
    if (!body) return;
    var seq = (state.seq[panel] || 0) + 1;
    state.seq[panel] = seq;
    var res = await fetch("/_dashboard/panels/" + panel + panelQuery(panel), { headers: { accept: "text/html" } });
    var html = await res.text();
    if (state.seq[panel] !== seq) return; // a newer refresh of this panel is on its way
    if (!res.ok) return toast(problemText(html, res.status), true);
    body.innerHTML = html;
    if (panel === "jobs") markSelected();
    if (panel === "endpoints") markEndpoint();
    if (panel === "clock") state.clockLoadedAt = Date.now();
  }

  // Many changes in a burst cost one refresh per panel.
  function schedule(panel, delay) {
    if (state.timers[panel]) return;
    state.timers[panel] = setTimeout(function () {
      state.timers[panel] = 0;
      if (!document.hidden) refresh(panel).catch(report);
    }, delay === undefined ? 120 : delay);
  }

  function refreshAll(panels) { (panels || ALL).forEach(function (p) { refresh(p).catch(report); }); }

  function problemText(text, status) {
    try {
      var p = JSON.parse(text);
      if (status === 404 && /no route for/.test(p.detail || "")) return "not available in this build";
      return p.detail || p.title || "HTTP " + status;
    } catch (e) { return "HTTP " + status; }
  }

  // Every write is JSON, an empty one included: minipod refuses a control POST of any other type,
  // the kind a page of another origin could send without asking. A refusal's reason is toasted,
  // unless quiet (the caller shows it), and kept as res.reason.
  async function send(method, path, body, quiet) {
    var init = { method: method, headers: { accept: "application/json", "content-type": "application/json" } };
    if (method !== "GET") init.body = JSON.stringify(body === undefined ? {} : body);
    var res = await fetch(path, init);
    if (!res.ok) {
      res.reason = problemText(await res.text(), res.status);
      if (!quiet) toast(method + " " + path + ": " + res.reason, true);
    }
    return res;
  }

  var toastTimer = 0;
  function toast(message, isError) {
    var el = byId("toast");
    el.textContent = message;
    el.className = isError ? "toast error" : "toast";
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { el.hidden = true; }, isError ? 6000 : 2500);
  }
  function report(e) { toast(String(e && e.message ? e.message : e), true); }

  function setLive(mode, text) { var el = byId("live"); el.dataset.state = mode; el.textContent = text; }

  function markSelected() {
    document.querySelectorAll("tr[data-job]").forEach(function (tr) { tr.classList.toggle("selected", tr.dataset.job === state.job); });
  }

  function selectJob(id) {
    state.job = id;
    writeHash();
    markSelected();
    refresh("job").catch(report);
  }

  // Deep links: #job=<id> opens a job, #endpoint=<id> shows an endpoint's jobs and picks it in the
  // submit form; both together as #endpoint=<id>&job=<id>. The hash follows the page's state.
  var jobsFilter = byId("jobs-filter").elements;

  function writeHash() {
    var params = new URLSearchParams();
    if (jobsFilter.endpoint.value) params.set("endpoint", jobsFilter.endpoint.value);
    if (state.job) params.set("job", state.job);
    var hash = params.toString() ? "#" + params.toString() : "";
    if (hash !== location.hash) history.replaceState(null, "", hash || location.pathname + location.search);
  }

  function markEndpoint() {
    document.querySelectorAll("article[data-endpoint]").forEach(function (a) { a.classList.toggle("selected", a.dataset.endpoint === jobsFilter.endpoint.value); });
  }

  function showEndpoint(id) {
    var known = Array.prototype.some.call(jobsFilter.endpoint.options, function (o) { return o.value === id; });
    if (!known) return toast("no endpoint \"" + id + "\" is served here", true);
    if (id) byId("submit-form").elements.endpoint.value = id;
    if (jobsFilter.endpoint.value !== id) {
      jobsFilter.endpoint.value = id;
      state.offset = 0;
      refresh("jobs").catch(report);
    }
    markEndpoint();
  }

  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var endpoint = params.get("endpoint");
    var job = params.get("job");
    if (endpoint !== null) showEndpoint(endpoint);
    if (job && job !== state.job) selectJob(job);
    else writeHash();
  }

  async function clockAction(path, body) {
    var card = byId("clock");
    card.classList.add("busy");
    try {
      var res = await send("POST", path, body);
      if (res.ok) refreshAll();
    } finally { card.classList.remove("busy"); }
  }

  document.addEventListener("click", function (ev) {
    var t = ev.target.closest("[data-advance], [data-action], [data-delete-fault], [data-offset], [data-job-action], tr[data-job]");
    if (!t || t.disabled) return;
    if (t.dataset.advance) return clockAction("/_emulator/clock/advance", { ms: Number(t.dataset.advance) }).catch(report);
    if (t.dataset.action === "run-until-idle") return clockAction("/_emulator/run-until-idle").catch(report);
    if (t.dataset.action === "clear-faults") {
      return send("DELETE", "/_emulator/faults").then(function (res) { if (res.ok) { toast("fault rules cleared"); refresh("faults"); } }).catch(report);
    }
    if (t.dataset.deleteFault) {
      return send("DELETE", "/_emulator/faults/" + encodeURIComponent(t.dataset.deleteFault)).then(function (res) { if (res.ok) refresh("faults"); }).catch(report);
    }
    if (t.dataset.offset !== undefined) { state.offset = Number(t.dataset.offset); return refresh("jobs").catch(report); }
    if (t.dataset.jobAction) return jobAction(t).catch(report);
    if (t.dataset.job) selectJob(t.dataset.job);
  });

  document.addEventListener("keydown", function (ev) {
    var tr = ev.target.closest && ev.target.closest("tr[data-job]");
    if (tr && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); selectJob(tr.dataset.job); }
  });

  // Cancel and retry, by the queue's rules (the control routes call the same operations). Either
  // way the job is shown again as it now is, so a refused action leaves no stale button.
  async function jobAction(button) {
    var id = button.dataset.jobId;
    var action = button.dataset.jobAction;
    button.disabled = true;
    try {
      var res = await send("POST", "/_emulator/jobs/" + encodeURIComponent(id) + "/" + action, {}, true);
      if (!res.ok) return toast(action + " refused: " + res.reason, true);
      var job = await res.json();
      if (action === "retry") toast("job " + id + " is back in the queue");
      else if (job.status === "CANCELLED") toast("job " + id + " cancelled");
      else toast("job " + id + " was already " + job.status + ": nothing to cancel", true);
    } finally {
      refresh("job").catch(report);
      refresh("jobs").catch(report);
    }
  }

  // Submitting a job: the input is checked here first, so a typo gets a clear message at once.
  var submitForm = byId("submit-form");
  function submitError(message) {
    var el = byId("submit-error");
    el.textContent = message || "";
    el.hidden = !message;
    submitForm.elements.input.setAttribute("aria-invalid", message ? "true" : "false");
  }
  function parseInput(text) {
    if (text.trim() === "") return { input: {} };
    var input;
    try { input = JSON.parse(text); } catch (e) { return { error: "The input is not valid JSON: " + e.message }; }
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      var kind = input === null ? "null" : Array.isArray(input) ? "an array" : "a " + typeof input;
      return { error: "The input must be a JSON object, like {\"prompt\": \"hello\"}, not " + kind + "." };
    }
    return { input: input };
  }
  submitForm.elements.input.addEventListener("input", function () { if (!byId("submit-error").hidden) submitError(""); });
  submitForm.elements.input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); submitForm.requestSubmit(); }
  });
  submitForm.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    var endpoint = submitForm.elements.endpoint.value;
    var parsed = parseInput(submitForm.elements.input.value);
    if (parsed.error) return submitError(parsed.error);
    submitError("");
    var button = submitForm.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      var res = await send("POST", "/_emulator/endpoints/" + encodeURIComponent(endpoint) + "/run", { input: parsed.input }, true);
      if (!res.ok) return submitError("Not submitted: " + res.reason);
      var job = await res.json();
      toast("job " + job.id + " submitted to " + endpoint);
      // The list shows the new job: filters that would hide it are let go.
      if (jobsFilter.endpoint.value && jobsFilter.endpoint.value !== endpoint) jobsFilter.endpoint.value = "";
      jobsFilter.status.value = "";
      state.offset = 0;
      markEndpoint();
      selectJob(job.id);
      await refresh("jobs");
    } catch (e) {
      submitError("Not submitted: " + (e && e.message ? e.message : e));
    } finally {
      button.disabled = false;
    }
  });

  byId("jobs-filter").addEventListener("change", function () { state.offset = 0; writeHash(); markEndpoint(); refresh("jobs").catch(report); });
  // Find by id: the list keeps the jobs whose id contains what is typed; Enter opens the newest.
  byId("jobs-filter").addEventListener("input", function (ev) { if (ev.target.name === "id") { state.offset = 0; schedule("jobs", 250); } });
  byId("jobs-filter").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = jobsFilter.id.value.trim();
    if (!text) return;
    send("GET", "/_emulator/jobs?limit=1&id=" + encodeURIComponent(text)).then(async function (res) {
      if (!res.ok) return;
      var page = await res.json();
      if (page.jobs.length === 0) return toast("no job's id contains \"" + text + "\"", true);
      selectJob(page.jobs[0].id);
      refresh("jobs").catch(report);
    }).catch(report);
  });
  byId("requests-filter").addEventListener("input", function () { schedule("requests", 250); });
  byId("requests-filter").addEventListener("submit", function (ev) { ev.preventDefault(); refresh("requests").catch(report); });

  var faultForm = byId("fault-form");
  faultForm.type.addEventListener("change", function () { faultForm.dataset.type = faultForm.type.value; });
  faultForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var f = new FormData(faultForm);
    var type = String(f.get("type"));
    var rule = { fault: { type: type } };
    ["endpoint", "operation"].forEach(function (k) { var v = String(f.get(k) || "").trim(); if (v) rule[k] = v; });
    if (type === "http") rule.fault.status = Number(f.get("status"));
    if (type === "latency") rule.fault.ms = Number(f.get("ms"));
    ["times", "probability", "after"].forEach(function (k) { var v = String(f.get(k) || "").trim(); if (v !== "") rule[k] = Number(v); });
    send("POST", "/_emulator/faults", rule).then(function (res) {
      if (res.ok) { toast("fault rule added"); refresh("faults").catch(report); }
    }).catch(report);
  });

  // Real and auto modes: the clock moves between refreshes, so show it moving (auto's jumps come with the jobs they move).
  setInterval(function () {
    var el = byId("clock-now");
    if (!el || el.dataset.mode === "manual" || document.hidden) return;
    var now = Number(el.dataset.now) + (Date.now() - state.clockLoadedAt) * Number(el.dataset.speed);
    var iso = new Date(now).toISOString();
    el.querySelector(".clock-date").textContent = iso.slice(0, 10);
    el.querySelector(".clock-time").textContent = iso.slice(11, 23);
  }, 100);

  document.addEventListener("visibilitychange", function () { if (!document.hidden) refreshAll(); });

  function connect() {
    if (!window.EventSource) return setLive("off", "no live updates in this browser");
    setLive("retry", "connecting…");
    var feed = new EventSource("/_emulator/feed");
    feed.addEventListener("ready", function () { setLive("on", "live"); refreshAll(); });
    feed.addEventListener("job", function (ev) {
      var change = JSON.parse(ev.data);
      schedule("jobs"); schedule("endpoints"); schedule("clock");
      if (change.id === state.job) schedule("job");
      schedule("webhooks", 500); schedule("requests", 500); schedule("faults", 500); schedule("batches", 500);
    });
    feed.addEventListener("worker", function () { schedule("endpoints"); });
    feed.addEventListener("tick", function () { ALL.forEach(function (p) { if (p !== "job") schedule(p, 0); }); });
    feed.addEventListener("resync", function () { refreshAll(); });
    feed.onerror = function () { setLive("retry", "reconnecting…"); };
  }

  window.addEventListener("hashchange", readHash);
  readHash();
  connect();
})();
`;
