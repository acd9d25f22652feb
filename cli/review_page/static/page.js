// The review page: comments kept in the browser until they are sent, the verdict posted with
// the CSRF token and the hash of the plan shown, and live reloads from the event stream.
"use strict";
(function () {
  const body = document.body;
  const token = body.dataset.token;
  const csrf = body.dataset.csrf;
  const q = (query) => encodeURIComponent(token) + (query ? "&" + query : "");
  const $ = (id) => document.getElementById(id);
  const storeKey = "planner-review-comments:" + token;
  let comments = JSON.parse(sessionStorage.getItem(storeKey) || "[]");
  let anchor = null;

  function state() { return $("state").dataset; }
  function say(text, isError) {
    const box = $("message");
    box.textContent = text;
    box.className = isError ? "error" : "ok";
  }

  function drawComments() {
    sessionStorage.setItem(storeKey, JSON.stringify(comments));
    const list = $("comments");
    list.replaceChildren();
    comments.forEach((c, index) => {
      const li = document.createElement("li");
      const where = document.createElement("a");
      where.href = "#" + c.anchor;
      where.textContent = c.anchor + (c.line ? " line " + c.line : "");
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove the comment on " + where.textContent);
      remove.addEventListener("click", () => { comments.splice(index, 1); drawComments(); });
      li.append(where, document.createTextNode(": " + c.text + " "), remove);
      list.append(li);
    });
    $("comment-count").textContent = String(comments.length);
  }

  function drawVerdictButtons() {
    const open = state().inReview === "1";
    $("approve").disabled = !open;
    $("request-changes").disabled = !open;
  }

  function startComment(button) {
    anchor = { anchor: button.dataset.anchor, line: button.dataset.line ? Number(button.dataset.line) : null };
    $("comment-anchor").textContent = anchor.anchor + (anchor.line ? " line " + anchor.line : "");
    $("comment-form").hidden = false;
    $("comment-text").value = "";
    $("comment-text").focus();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.comment, button.ln");
    if (button) startComment(button);
  });
  $("comment-cancel").addEventListener("click", () => { $("comment-form").hidden = true; });
  $("comment-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("comment-text").value.trim();
    if (!text || !anchor) return;
    comments.push({ anchor: anchor.anchor, line: anchor.line, text: text });
    $("comment-form").hidden = true;
    drawComments();
    say("Comment added on " + anchor.anchor + (anchor.line ? " line " + anchor.line : "") + ".");
  });

  async function post(path, payload) {
    const response = await fetch(path + "?token=" + q(), {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(payload),
    });
    let answer = {};
    try { answer = await response.json(); } catch (e) { answer = { error: response.statusText }; }
    return { ok: response.ok, answer: answer };
  }

  $("changes-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const feedback = $("feedback").value.trim();
    if (!feedback && !comments.length) { say("Write what must change, or add a comment.", true); return; }
    const { ok, answer } = await post("request-changes", { feedback: feedback, comments: comments });
    if (!ok) { say(answer.error || "refused", true); return; }
    comments = [];
    $("feedback").value = "";
    drawComments();
    say("Changes requested: the agent revises the plan (" + (answer.next || (answer.told || []).join(" ")) + ").");
    await reload();
  });

  $("approve-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const { ok, answer } = await post("approve", { sha256: state().sha256, by: $("approver").value });
    if (!ok) {
      say(answer.stale ? answer.error + " — the page reloads the plan now." : (answer.error || "refused"), true);
      if (answer.stale) await reload();
      return;
    }
    say("Approved. Next: " + answer.next);
    await reload();
  });

  $("content").addEventListener("submit", async (event) => {
    if (event.target.id !== "compare-form") return;
    event.preventDefault();
    const a = encodeURIComponent($("rev-a").value);
    const b = encodeURIComponent($("rev-b").value);
    const response = await fetch("compare?token=" + q("a=" + a + "&b=" + b));
    $("compare-result").innerHTML = await response.text();
  });

  $("content").addEventListener("input", (event) => {
    if (event.target.id !== "audit-search") return;
    const needle = event.target.value.toLowerCase();
    document.querySelectorAll("table.audit tbody tr").forEach((row) => {
      row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
    });
  });

  // One reload at a time; changes that arrive meanwhile fold into one more.
  let loading = null;
  let again = false;
  async function reload() {
    if (loading) { again = true; return loading; }
    loading = (async () => {
      do { again = false; await load(); } while (again);
    })();
    try { await loading; } finally { loading = null; }
  }

  async function load() {
    const response = await fetch("content?token=" + q());
    if (!response.ok) return;
    const html = await response.text();
    const scroll = window.scrollY;
    $("content").innerHTML = html;
    window.scrollTo(0, scroll);
    drawVerdictButtons();
    $("live").textContent = "Updated " + new Date().toLocaleTimeString() + " (plan sha256 " + state().sha256.slice(0, 12) + "…)";
    body.dataset.version = String(Number(body.dataset.version || "0") + 1);
  }

  const events = new EventSource("events?token=" + q());
  events.addEventListener("change", () => { reload(); });
  events.addEventListener("open", () => { body.dataset.live = "1"; });

  drawComments();
  drawVerdictButtons();
})();
