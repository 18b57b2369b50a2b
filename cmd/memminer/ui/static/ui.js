// memminer ui: sends the page's forms with the token in a header (a form
// posted by another site has no way to add it), shows what each change
// did, and the inbox's keyboard keys. Every text is set with textContent:
// nothing from the server becomes markup.
"use strict";

const token = document.querySelector('meta[name="memminer-token"]').content;
const flashKey = "memminer-flash";

function showFlash() {
	const box = document.getElementById("flash");
	const saved = sessionStorage.getItem(flashKey);
	if (!box || !saved) return;
	sessionStorage.removeItem(flashKey);
	for (const o of JSON.parse(saved)) {
		const p = document.createElement("p");
		p.textContent = o.message;
		if (!o.ok) p.className = "failed";
		box.appendChild(p);
	}
}

async function send(url, params, buttons) {
	buttons.forEach((b) => (b.disabled = true));
	let results;
	try {
		const resp = await fetch(url, {
			method: "POST",
			headers: { "X-Memminer-Token": token, "Content-Type": "application/x-www-form-urlencoded" },
			body: params,
			credentials: "same-origin",
		});
		const type = resp.headers.get("Content-Type") || "";
		results = type.startsWith("application/json") ? (await resp.json()).results : [{ ok: false, message: await resp.text() }];
	} catch (err) {
		results = [{ ok: false, message: String(err) }];
	}
	sessionStorage.setItem(flashKey, JSON.stringify(results));
	location.reload();
}

function submitForm(form, submitter) {
	const params = new URLSearchParams(new FormData(form));
	if (submitter && submitter.name) params.set(submitter.name, submitter.value);
	send(form.getAttribute("action"), params, Array.from(form.querySelectorAll("button")));
}

function decide(action, refs) {
	const form = document.getElementById("decide");
	const params = new URLSearchParams();
	params.set("action", action);
	params.set("note", document.getElementById("note").value);
	refs.forEach((r) => params.append("ref", r));
	send(form.getAttribute("action"), params, Array.from(form.querySelectorAll("button")));
}

document.addEventListener("submit", (ev) => {
	const form = ev.target;
	if (!form.dataset.api) return;
	ev.preventDefault();
	submitForm(form, ev.submitter);
});

document.addEventListener("click", (ev) => {
	const b = ev.target.closest("button[data-action]");
	if (b) {
		ev.preventDefault();
		decide(b.dataset.action, [b.dataset.ref]);
	}
});

document.addEventListener("change", (ev) => {
	if (!ev.target.matches("[data-select-all]")) return;
	document.querySelectorAll('#decide input[name="ref"]').forEach((c) => (c.checked = ev.target.checked));
});

// The inbox from the keyboard: j and k move, x selects, a approves and r
// rejects the selected items, or the current one when none is selected.
let current = -1;
function items() {
	return Array.from(document.querySelectorAll("#decide .item"));
}
function move(by) {
	const all = items();
	if (all.length === 0) return;
	all.forEach((i) => i.classList.remove("current"));
	current = Math.max(0, Math.min(all.length - 1, current + by));
	all[current].classList.add("current");
	all[current].scrollIntoView({ block: "nearest" });
}
function chosen() {
	const picked = Array.from(document.querySelectorAll('#decide input[name="ref"]:checked')).map((c) => c.value);
	if (picked.length > 0) return picked;
	const all = items();
	return current >= 0 && all[current] ? [all[current].dataset.ref] : [];
}
document.addEventListener("keydown", (ev) => {
	if (!document.getElementById("decide") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
	if (ev.target.matches("input[type=text], textarea")) return;
	switch (ev.key) {
		case "j": move(1); break;
		case "k": move(-1); break;
		case "x": {
			const all = items();
			if (all[current]) {
				const c = all[current].querySelector('input[name="ref"]');
				c.checked = !c.checked;
			}
			break;
		}
		case "a":
		case "r": {
			const refs = chosen();
			if (refs.length > 0) decide(ev.key === "a" ? "approve" : "reject", refs);
			break;
		}
		default: return;
	}
	ev.preventDefault();
});

showFlash();
