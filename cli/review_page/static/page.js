// The review page: comments kept in the browser until they are sent (shown on their item and
// line, the form opened where the person clicked), the verdict posted with the CSRF token and
// the hash of what was shown (the plan, or after execution the result), and live reloads from
// the event stream.
"use strict";
(function () {
  const body = document.body;
  const token = body.dataset.token;
  const csrf = body.dataset.csrf;
  const q = (query) => encodeURIComponent(token) + (query ? "&" + query : "");
  const $ = (id) => document.getElementById(id);
  const storeKey = "planner-review-comments:" + token;
  const feedbackKey = "planner-review-feedback:" + token;
  const form = $("comment-form");
  const maxComments = Number($("comments").dataset.max);
  // A draft from the review companion (plan mcp) fills the list until the person edits it.
  let comments = JSON.parse(sessionStorage.getItem(storeKey) || $("comments").dataset.draft || "[]");
  let anchor = null; // {anchor, file, line} the open form is for
  let opener = null; // the button that opened it: focus goes back there

  function state() { return $("state").dataset; }
  // After execution the verdict is on the result (accept or request changes), else on the plan.
  function onResult() { return state().inResultReview === "1"; }
  function say(text, isError) {
    const box = $("message");
    box.textContent = text;
    box.className = isError ? "error" : "ok";
  }
  function where(c) { return c.anchor + (c.file ? " " + c.file : "") + (c.line ? " line " + c.line : ""); }
  function fileSelector(c) { return c.file ? "[data-file=\"" + CSS.escape(c.file) + "\"]" : ""; }
  function cssId(text) { return text.replace(/[^A-Za-z0-9_-]/g, ""); }

  // The element a comment on `c` goes after: its diff line's row (and the rows already
  // shown under it), or the item's thread.
  function placeOf(c) {
    if (c.line) {
      const row = document.querySelector("table.diff[data-change='" + cssId(c.anchor) + "']" + fileSelector(c) + " tr[data-line='" + Number(c.line) + "']");
      if (row) {
        let last = row;
        while (last.nextElementSibling && last.nextElementSibling.matches(".said-row, .pending-row")) last = last.nextElementSibling;
        return { row: last };
      }
    }
    const thread = document.querySelector("[data-thread='" + cssId(c.anchor) + "']");
    return thread ? { thread: thread } : null;
  }

  function openerFor(c) {
    const selector = c.line
      ? "button.ln[data-anchor='" + cssId(c.anchor) + "']" + fileSelector(c) + "[data-line='" + Number(c.line) + "']"
      : "button.comment[data-anchor='" + cssId(c.anchor) + "']";
    return document.querySelector(selector);
  }

  function removeButton(index, label) {
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.dataset.index = String(index);
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", "Remove the comment on " + label);
    return remove;
  }

  function drawComments() {
    sessionStorage.setItem(storeKey, JSON.stringify(comments));
    const list = $("comments");
    list.replaceChildren();
    document.querySelectorAll(".pending, .pending-row").forEach((node) => node.remove());
    comments.forEach((c, index) => {
      const li = document.createElement("li");
      const link = document.createElement("a");
      link.href = "#" + (c.line && !c.file ? c.anchor + "-L" + c.line : c.anchor);
      link.textContent = where(c);
      li.append(link, document.createTextNode(": " + c.text + " "), removeButton(index, where(c)));
      li.dataset.side = "list";
      list.append(li);

      const note = document.createElement("div");
      note.className = "pending";
      const label = document.createElement("strong");
      label.textContent = "Your comment" + (c.line ? " on line " + c.line : "") + ": ";
      note.append(label, document.createTextNode(c.text + " "), removeButton(index, where(c)));
      const place = placeOf(c);
      if (place && place.row) {
        rowAfter(place.row, "pending-row", note);
      } else if (place) {
        place.thread.append(note);
      }
    });
    $("comment-count").textContent = String(comments.length);
  }

  function drawVerdictButtons() {
    const open = state().inReview === "1" || onResult();
    $("approve").disabled = !open;
    $("request-changes").disabled = !open;
    $("approve").textContent = onResult() ? "Accept the result…" : "Approve this plan…";
    $("approver-label").textContent = "Your name (required to " + (onResult() ? "accept" : "approve") + ")";
    $("feedback-label").textContent = onResult() ? "What must change (required: it becomes the amendment's task)" : "What must change (overall)";
    if (!open) $("approve-confirm").hidden = true;
  }

  // A table row under a diff line holding `content` across its three cells.
  function rowAfter(row, className, content) {
    const tr = document.createElement("tr");
    tr.className = className;
    const td = document.createElement("td");
    td.colSpan = 3;
    td.append(content);
    tr.append(td);
    row.after(tr);
  }

  function placeForm() {
    if (!anchor) return;
    const place = placeOf(anchor);
    if (place && place.row) {
      rowAfter(place.row, "form-row", form);
    } else if (place) {
      place.thread.after(form);
    } else {
      $("form-home").after(form);
    }
  }

  function closeForm(focusBack) {
    const row = form.closest("tr.form-row");
    $("form-home").append(form);
    if (row) row.remove();
    anchor = null;
    if (focusBack && opener && opener.isConnected) opener.focus();
  }

  function startComment(button) {
    closeForm(false);
    opener = button;
    anchor = { anchor: button.dataset.anchor, file: button.dataset.file || null, line: button.dataset.line ? Number(button.dataset.line) : null };
    $("comment-anchor").textContent = where(anchor);
    $("comment-text").value = "";
    placeForm();
    $("comment-text").focus();
  }

  function removeComment(button) {
    const index = Number(button.dataset.index);
    const inList = button.closest("#comments") !== null;
    const [gone] = comments.splice(index, 1);
    drawComments();
    say("Comment on " + where(gone) + " removed.");
    let next = null;
    if (inList) {
      const buttons = $("comments").querySelectorAll("button.remove");
      next = buttons[Math.min(index, buttons.length - 1)] || $("comments-h");
    } else {
      next = openerFor(gone) || $("comments-h");
    }
    next.focus();
  }

  document.addEventListener("click", (event) => {
    const remove = event.target.closest("button.remove");
    if (remove) { removeComment(remove); return; }
    const button = event.target.closest("button.comment, button.ln");
    if (button) startComment(button);
  });

  // Line numbers are one tab stop per diff: arrow keys move between them.
  document.addEventListener("keydown", (event) => {
    const button = event.target.closest && event.target.closest("button.ln");
    if (!button || !["ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
    const all = Array.from(button.closest("table").querySelectorAll("button.ln"));
    let at = all.indexOf(button);
    if (event.key === "ArrowDown") at = Math.min(at + 1, all.length - 1);
    if (event.key === "ArrowUp") at = Math.max(at - 1, 0);
    if (event.key === "Home") at = 0;
    if (event.key === "End") at = all.length - 1;
    all.forEach((b) => { b.tabIndex = -1; });
    all[at].tabIndex = 0;
    all[at].focus();
    event.preventDefault();
  });

  form.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.preventDefault(); closeForm(true); }
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
  });
  // The overall feedback is kept like the comments: a reload keeps what was typed.
  const keptFeedback = sessionStorage.getItem(feedbackKey);
  if (keptFeedback !== null) $("feedback").value = keptFeedback;
  $("feedback").addEventListener("input", () => { sessionStorage.setItem(feedbackKey, $("feedback").value); });
  function unsent() { return comments.length > 0 || $("feedback").value.trim() !== ""; }
  window.addEventListener("beforeunload", (event) => {
    if (!unsent()) return;
    event.preventDefault();
    event.returnValue = ""; // the browser asks whether to leave with the text unsent
  });
  $("feedback").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); $("changes-form").requestSubmit(); }
  });
  $("comment-cancel").addEventListener("click", () => closeForm(true));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("comment-text").value.trim();
    if (!text || !anchor) return;
    if (comments.length >= maxComments) { say("At most " + maxComments + " comments in one round: put the rest in the overall feedback.", true); return; }
    const added = { anchor: anchor.anchor, file: anchor.file, line: anchor.line, text: text };
    comments.push(added);
    closeForm(true);
    drawComments();
    say("Comment added on " + where(added) + ".");
  });

  async function post(path, payload) {
    const response = await fetch(path + "?token=" + q(), {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(payload),
    });
    let answer = {};
    try { answer = await response.json(); } catch (e) { answer = { error: response.statusText }; }
    return { ok: response.ok, status: response.status, answer: answer };
  }

  $("changes-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const feedback = $("feedback").value.trim();
    const result = onResult();
    if (result && !feedback) { say("Write what must change: it becomes the amendment's task.", true); $("feedback").focus(); return; }
    if (!feedback && !comments.length) { say("Write what must change, or add a comment.", true); return; }
    const sha = result ? state().resultSha256 : state().sha256;
    const payload = { feedback: feedback, comments: comments, by: $("approver").value.trim(), sha256: sha };
    const { ok, answer } = await post(result ? "result/request-changes" : "request-changes", payload);
    if (!ok) {
      say(answer.stale ? answer.error + " — the page reloads the plan now." : (answer.error || "refused"), true);
      if (answer.stale) await reload();
      return;
    }
    comments = [];
    $("feedback").value = "";
    sessionStorage.removeItem(feedbackKey);
    drawComments();
    // Said after the reload: the reload clears what the page said about the plan it replaced.
    await reload();
    say("Changes requested: the agent " + (result ? "amends" : "revises") + " the plan (" + (answer.next || (answer.told || []).join(" ")) + ").");
  });

  $("approve-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("approver").value.trim();
    const result = onResult();
    if (!name) { say("Your name is required to " + (result ? "accept" : "approve") + ".", true); $("approver").focus(); return; }
    $("confirm-text").textContent = result
      ? "Accept result round " + state().resultRound + " of this plan's execution, sha256 " + state().resultSha256 + ", as " + name + "?"
      : "Approve review round " + state().round + " of this plan, sha256 " + state().sha256 + ", as " + name + "?";
    $("approve-confirm").dataset.sha256 = result ? state().resultSha256 : state().sha256;
    $("approve-confirm").dataset.verdict = result ? "accept" : "approve";
    $("approve-yes").textContent = result ? "Yes, accept" : "Yes, approve";
    $("approve-confirm").hidden = false;
    $("approve-yes").focus();
  });
  $("approve-no").addEventListener("click", () => { $("approve-confirm").hidden = true; $("approve").focus(); });
  $("approve-yes").addEventListener("click", async () => {
    $("approve-confirm").hidden = true;
    const sha = $("approve-confirm").dataset.sha256;
    const verdict = $("approve-confirm").dataset.verdict || "approve";
    const { ok, answer } = await post(verdict, { sha256: sha, by: $("approver").value.trim() });
    if (!ok) {
      say(answer.stale ? answer.error + " — the page reloads the plan now." : (answer.error || "refused"), true);
      if (answer.stale) await reload();
      return;
    }
    await reload();
    say(verdict === "accept" ? "Accepted: the session is completed." : "Approved. Next: " + answer.next);
    $("status").setAttribute("tabindex", "-1");
    $("status").focus();
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
    const before = state().sha256;
    const resultBefore = state().resultSha256;
    const open = Array.from(document.querySelectorAll("#content details[open]")).map((d) => d.id);
    const focused = document.activeElement;
    const refocus = focused && $("content").contains(focused) && focused.dataset.anchor
      ? { anchor: focused.dataset.anchor, file: focused.dataset.file || null, line: focused.dataset.line ? Number(focused.dataset.line) : null } : null;
    const typing = form.isConnected && $("content").contains(form) ? $("comment-text").value : null;
    if (typing !== null) $("form-home").append(form);
    const scroll = window.scrollY;
    $("content").innerHTML = html;
    open.forEach((id) => { const d = $(id); if (d) d.open = true; });
    drawComments();
    if (typing !== null && anchor) { placeForm(); $("comment-text").value = typing; }
    window.scrollTo(0, scroll);
    if (refocus && !(typing !== null && anchor)) { const back = openerFor(refocus); if (back) back.focus(); }
    drawVerdictButtons();
    if (state().sha256 !== before || (onResult() && state().resultSha256 !== resultBefore)) {
      // A new plan, or a new result in review: what the page said about the old one no
      // longer holds.
      $("message").textContent = "";
      $("message").className = "";
      $("approve-confirm").hidden = true;
    }
    $("live").textContent = "Updated " + new Date().toLocaleTimeString() + " (plan sha256 " + state().sha256.slice(0, 12) + "…)";
    body.dataset.version = String(Number(body.dataset.version || "0") + 1);
  }

  const events = new EventSource("events?token=" + q());
  events.addEventListener("change", () => { reload(); });
  events.addEventListener("open", () => { body.dataset.live = "1"; });

  drawComments();
  drawVerdictButtons();
})();
