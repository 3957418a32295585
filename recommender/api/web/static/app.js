// The page's flow: examples into the form, the form to POST /v1/recommendations (after an
// optional profile upload), the answer into the table, advice and charts; /r/{id} re-opens one.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const SHARED = /^\/r\/([^/]+)$/;
  const DEFAULT_EXAMPLE = "llm-finetune.yaml";
  // Pick keys the table and explanation already show; any other key is rendered generically.
  const KNOWN_PICK_KEYS = new Set(["rank", "cloud", "region", "instance_type", "accelerator",
    "gpus", "pricing", "purchase", "price_per_hour", "predicted", "cost", "why", "limits", "alternatives",
    "pareto_optimal", "memory", "nodes", "total_gpus"]);
  // expected_error is said in words among the advice ("... were off by N % (median ...").
  const KNOWN_RESULT_KEYS = new Set(["workload", "workload_class", "objective", "picks",
    "advice", "offers_considered", "offers_feasible", "pareto", "excluded", "landscape", "id",
    "created_at", "profile_id", "request", "expected_error"]);
  let examples = [];
  let uploaded = { file: null, id: null };

  function headers(json) {
    const h = { Accept: "application/json, application/problem+json" };
    if (json) h["Content-Type"] = "application/json";
    const key = $("f-apikey").value.trim();
    if (key) h.Authorization = "Bearer " + key;
    return h;
  }

  async function call(method, url, body) {
    const res = await fetch(url, { method, headers: headers(body !== undefined), body });
    let doc = null;
    try { doc = await res.json(); } catch (e) { doc = null; }
    return { ok: res.ok, status: res.status, doc };
  }

  function status(message) { $("status").textContent = message; }

  async function loadExamples() {
    const r = await call("GET", "/web/examples.json");
    examples = r.ok && Array.isArray(r.doc) ? r.doc : [];
    const select = $("example");
    examples.forEach((ex) => {
      const o = document.createElement("option");
      o.value = ex.file;
      o.textContent = `${ex.name} (${ex.kind})`;
      select.appendChild(o);
    });
  }

  // The model registry's names as the model field's suggestions (the field takes any text).
  async function loadModelNames() {
    const r = await call("GET", "/web/models.json");
    (r.ok && Array.isArray(r.doc) ? r.doc : []).forEach((m) => {
      const o = document.createElement("option");
      o.value = m.name;
      o.label = `${m.title} (${RecChart.count(m.parameters)} parameters)`;
      $("model-names").appendChild(o);
    });
  }

  function useExample(file) {
    const ex = examples.find((e) => e.file === file);
    $("example").value = ex ? ex.file : "";
    RecForm.clearErrors();
    RecForm.fill(ex ? ex.workload : { kind: "training" });
  }

  async function uploadProfile() {
    const file = $("f-profile").files[0];
    if (!file || uploaded.file === file) return true;
    $("profile-status").textContent = "uploading the profile…";
    const r = await call("POST", "/v1/profiles", await file.text());
    if (!r.ok) {
      const p = r.doc || {};
      const where = (p.errors || []).map((e) => `${e.field}: ${e.message}`).join("; ");
      RecForm.showErrors([{ field: "(profile)",
        message: `not stored (${r.status}): ${where || p.detail || "refused"}` }]);
      $("profile-status").textContent = "";
      return false;
    }
    uploaded = { file, id: r.doc.id };
    $("f-profile-id").value = r.doc.id;
    $("profile-status").textContent =
      `Stored as profile ${r.doc.id} (${r.doc.accelerator || "unknown accelerator"}, ` +
      `${r.doc.bound || "unclassified"}); it goes with this recommendation, whose notes say ` +
      "how it was used (a profile of this workload calibrates it, of another lends its GPU figures).";
    return true;
  }

  async function submit(ev) {
    ev.preventDefault();
    RecForm.clearErrors();
    let body;
    try {
      body = RecForm.read();
    } catch (local) {
      RecForm.showErrors([local]);
      return;
    }
    $("submit").disabled = true;
    status("Ranking every offer…");
    try {
      if (!(await uploadProfile())) { status(""); return; }
      body = RecForm.read();
      body.landscape = true;
      const r = await call("POST", "/v1/recommendations", JSON.stringify(body));
      if (!r.ok) {
        const p = r.doc || {};
        RecForm.showErrors(p.errors, `${p.title || r.status}: ${p.detail || "refused"}`);
        status(`Not accepted (${r.status}).`);
        return;
      }
      render(r.doc);
      history.pushState({ id: r.doc.id }, "", "/r/" + r.doc.id);
      status(`${r.doc.picks.length} picks from ${r.doc.offers_feasible} feasible offers.`);
    } catch (e) {
      status("The service did not answer: " + e.message);
    } finally {
      $("submit").disabled = false;
    }
  }

  function cell(row, content, cls) {
    const td = document.createElement("td");
    td.textContent = content;
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function timeOf(pick) {
    const p = pick.predicted;
    if (p.total_hours != null) return RecChart.duration(p.total_hours * 3600);
    if (p.p95_latency_ms != null) return "p95 " + RecChart.duration(p.p95_latency_ms / 1e3);
    return RecChart.duration(p.step_time_s);
  }

  function costOf(pick) {
    const c = pick.cost;
    if (c.monthly_usd != null && c.total_usd == null) return RecChart.money(c.monthly_usd) + "/mo";
    if (c.total_usd != null) return RecChart.money(c.total_usd);
    if (c.per_million_usd != null) {
      return RecChart.money(c.per_million_usd) + "/M " + (c.per_million_unit || "");
    }
    return "–";
  }

  function throughputOf(pick) {
    const p = pick.predicted;
    const base = `${Number(p.throughput).toPrecision(4)}/s`;
    return p.tokens_per_s != null ? `${base} (${Math.round(p.tokens_per_s)} tok/s)` : base;
  }

  const COLUMNS = [
    ["#", (p) => String(p.rank), "num"],
    ["Cloud", (p) => p.cloud, "tight"],
    ["Region", (p) => p.region || "–"],
    ["Instance", (p) => (p.nodes > 1 ? `${p.nodes} × ${p.instance_type}` : p.instance_type), "break"],
    ["GPUs", (p) => `${p.gpus} × ${p.accelerator}`],
    ["Pricing", (p) => (p.purchase && p.purchase !== p.pricing ? `${p.pricing} (${p.purchase})` : p.pricing)],
    ["Price/h", (p) => RecChart.money(p.price_per_hour), "num"],
    ["Throughput", throughputOf, "num"],
    ["Time", timeOf, "num"],
    ["Cost", costOf, "num"],
    ["Bottleneck", (p) => p.predicted.bottleneck, "tight"],
  ];

  function list(items) {
    const ul = document.createElement("ul");
    items.forEach((t) => { const li = document.createElement("li"); li.textContent = t;
      ul.appendChild(li); });
    return ul;
  }

  function shown(v) {
    return v !== null && v !== undefined && !(Array.isArray(v) && !v.length) &&
      !(typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);
  }

  // A value as a definition list: nested objects nest, lists of scalars join, nulls drop.
  function describe(obj, keys) {
    const dl = document.createElement("dl");
    dl.className = "extra";
    keys.filter((k) => shown(obj[k])).forEach((k) => {
      const dt = document.createElement("dt");
      dt.textContent = k;
      const dd = document.createElement("dd");
      const v = obj[k];
      if (Array.isArray(v) && v.every((x) => typeof x !== "object")) {
        dd.textContent = v.join(", ");
      } else if (typeof v === "object") {
        dd.appendChild(describe(v, Object.keys(v)));
      } else {
        dd.textContent = String(v);
      }
      dl.append(dt, dd);
    });
    return dl;
  }

  // Keys this page does not know (a plan, a recipe, nodes): shown as they come.
  function extras(obj, known) {
    const keys = Object.keys(obj).filter((k) => !known.has(k) && shown(obj[k]));
    return keys.length ? describe(obj, keys) : null;
  }

  function explanation(pick) {
    const tr = document.createElement("tr");
    tr.className = "why";
    const td = document.createElement("td");
    td.colSpan = COLUMNS.length;
    const details = document.createElement("details");
    details.open = pick.rank === 1;
    const summary = document.createElement("summary");
    summary.textContent = `Why #${pick.rank}`;
    details.append(summary, list(pick.why || []));
    if (pick.limits && pick.limits.length) details.appendChild(list(pick.limits));
    if (pick.alternatives && pick.alternatives.length) {
      details.appendChild(list(pick.alternatives.map((a) =>
        `${a.relation}: ${a.cloud} ${a.region || ""} ${a.pricing} ` +
        `${RecChart.money(a.price_per_hour)}/h, total ${RecChart.money(a.total_usd)}`)));
    }
    const more = extras(pick, KNOWN_PICK_KEYS);
    if (more) details.appendChild(more);
    td.appendChild(details);
    tr.appendChild(td);
    return tr;
  }

  function renderTable(picks) {
    const head = $("picks").querySelector("thead");
    const body = $("picks").querySelector("tbody");
    head.textContent = "";
    body.textContent = "";
    const hr = document.createElement("tr");
    COLUMNS.forEach(([title, , cls]) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = title;
      if (cls) th.className = cls;
      hr.appendChild(th);
    });
    head.appendChild(hr);
    picks.forEach((pick) => {
      const tr = document.createElement("tr");
      tr.className = "pick";
      COLUMNS.forEach(([, value, cls]) => cell(tr, value(pick), cls));
      body.append(tr, explanation(pick));
    });
  }

  function landscapeOf(rec) {
    if (rec.landscape) return rec.landscape;
    // Stored without the landscape: plot the picks alone.
    const training = rec.picks.some((p) => p.predicted.total_hours != null);
    return {
      cost_label: training ? "job cost (USD)" : "cost (USD)",
      time_label: training ? "total time" : "p95 latency",
      omitted: 0,
      points: rec.picks.map((p) => ({
        cloud: p.cloud, region: p.region, instance_type: p.instance_type,
        accelerator: p.accelerator, gpus: p.gpus, pricing: p.pricing,
        price_per_hour: p.price_per_hour, bottleneck: p.predicted.bottleneck,
        pareto_optimal: p.pareto_optimal, rank: p.rank,
        cost_usd: p.cost.total_usd != null ? p.cost.total_usd
          : (p.cost.monthly_usd != null ? p.cost.monthly_usd : p.cost.per_million_usd),
        time_s: p.predicted.total_hours != null ? p.predicted.total_hours * 3600
          : (p.predicted.p95_latency_ms || 0) / 1e3,
      })),
    };
  }

  function render(rec) {
    $("results").hidden = false;
    const excluded = Object.entries(rec.excluded || {}).map(([k, n]) => `${n} ${k}`);
    $("summary").textContent = `${rec.workload} (${rec.workload_class}), objective ` +
      `${rec.objective}: ${rec.offers_feasible} of ${rec.offers_considered} offers feasible` +
      (excluded.length ? ` (ruled out: ${excluded.join(", ")})` : "") + ".";
    const more = extras(rec, KNOWN_RESULT_KEYS);
    const old = $("results").querySelector("dl.extra.top-extra");
    if (old) old.remove();
    if (more) { more.classList.add("top-extra"); $("summary").after(more); }
    if (rec.id) {
      const url = new URL("/r/" + rec.id, location.href).href;
      $("share-link").href = url;
      $("share-link").textContent = url;
      $("share").hidden = false;
    }
    renderTable(rec.picks);
    const advice = $("advice");
    advice.textContent = "";
    (rec.advice || []).forEach((t) => {
      const li = document.createElement("li"); li.textContent = t; advice.appendChild(li);
    });
    const land = landscapeOf(rec);
    $("offer-detail").textContent = land.omitted ? `${land.omitted} more offers not drawn.` : "";
    RecChart.scatter($("chart"), land, (p) => {
      $("offer-detail").textContent = RecChart.offerText(p);
    });
    RecChart.memory($("memory"), rec.picks);
  }

  async function openShared(id) {
    status("Loading the stored recommendation…");
    const r = await call("GET", "/v1/recommendations/" + encodeURIComponent(id));
    if (!r.ok) {
      useExample(DEFAULT_EXAMPLE);
      const why = (r.doc && r.doc.detail) || r.status;
      RecForm.showErrors([], r.status === 401
        ? `This service needs an API key to read recommendation ${id}: ${why}`
        : `No stored recommendation ${id}: ${why}`);
      status("");
      return;
    }
    $("example").value = "";
    RecForm.fill(r.doc.request || {});
    render(r.doc);
    status(`Stored recommendation from ${r.doc.created_at}.`);
  }

  async function start() {
    $("workload-form").addEventListener("submit", submit);
    $("example").addEventListener("change", (ev) => useExample(ev.target.value));
    $("f-profile").addEventListener("change", () => { $("profile-status").textContent = ""; });
    await Promise.all([loadExamples(), loadModelNames()]);
    const shared = SHARED.exec(location.pathname);
    if (shared) await openShared(decodeURIComponent(shared[1]));
    else useExample(new URLSearchParams(location.search).get("example") || DEFAULT_EXAMPLE);
    document.body.dataset.ready = "true";
  }

  window.addEventListener("popstate", () => location.reload());
  start();
})();
