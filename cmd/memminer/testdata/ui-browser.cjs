// ui-browser.cjs URL SHOTS CHROMIUM drives the page `memminer ui` serves
// as a person would, in Debian's Chromium, headless, through
// playwright-core (installed by .ci/setup-ui-browser.sh): it opens the
// printed URL, looks at the overview, goes to the inbox, approves the
// first item with a note and waits for the page to say so, then ticks
// one of the two removals a conflict copy proposes, leaves the other
// unticked, and applies its merge. Each page is
// kept as a screenshot in SHOTS. It prints what it saw as JSON.
"use strict";
const { chromium } = require("playwright-core");

async function main() {
	const [url, shots, executablePath] = process.argv.slice(2);
	const args = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
	if (process.getuid && process.getuid() === 0) args.push("--no-sandbox");
	const browser = await chromium.launch({ executablePath, headless: true, args });
	try {
		const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
		const out = { errors: [], dialogs: [] };
		page.on("pageerror", (e) => out.errors.push(String(e)));
		page.on("console", (m) => m.type() === "error" && out.errors.push(m.text()));
		page.on("dialog", async (d) => {
			out.dialogs.push(d.message());
			await d.dismiss();
		});
		await page.goto(url);
		out.overviewURL = page.url();
		out.overviewTitle = await page.title();
		await page.screenshot({ path: shots + "/overview.png", fullPage: true });
		await page.click('nav a[href="/inbox"]');
		await page.waitForSelector("#decide .item");
		out.pendingBefore = await page.locator("#decide .item").count();
		out.texts = await page.locator("#decide .item pre.text").allTextContents();
		await page.screenshot({ path: shots + "/inbox-before.png", fullPage: true });
		await page.fill("#note", "checked in the browser");
		await page.locator("#decide .item").first().locator("button.approve").click();
		await page.waitForSelector("#flash p");
		out.flash = await page.locator("#flash p").allTextContents();
		out.pendingAfter = await page.locator("#decide .item").count();
		await page.screenshot({ path: shots + "/inbox-after.png", fullPage: true });
		await page.click('nav a[href="/conflicts"]');
		await page.waitForSelector("section.merge");
		out.proposed = await page.locator("fieldset.removals pre.text").allTextContents();
		await page.screenshot({ path: shots + "/conflicts-before.png", fullPage: true });
		await page.locator("fieldset.removals label", { hasText: "Stand-up is at 9:30." }).locator('input[name="reviewed"]').check();
		await page.click("form.apply button[type=submit]");
		await page.waitForSelector("#flash p");
		out.mergeFlash = await page.locator("#flash p").allTextContents();
		await page.screenshot({ path: shots + "/conflicts-after.png", fullPage: true });
		await page.click('nav a[href="/packs"]');
		await page.waitForSelector('tr[data-pack="deploy"]');
		await page.screenshot({ path: shots + "/packs-before.png", fullPage: true });
		const deploy = page.locator('tr[data-pack="deploy"]');
		await deploy.locator('input[name="note"]').fill("rewrote the use list");
		await deploy.locator('button[value="reviewed"]').click();
		await page.waitForSelector("#flash p");
		out.packFlash = await page.locator("#flash p").allTextContents();
		await page.screenshot({ path: shots + "/packs-after.png", fullPage: true });
		await page.click('nav a[href="/memory"]');
		await page.fill('input[name="q"]', "load balancer idle connections");
		await page.click('form.search button[type="submit"]');
		await page.waitForSelector("li.hit");
		out.hits = await page.locator("li.hit pre.text").allTextContents();
		await page.screenshot({ path: shots + "/memory.png", fullPage: true });
		await page.locator("li.hit").first().locator('a[href^="/memory/note"]').click();
		await page.waitForSelector("section.shown");
		out.noteText = await page.locator("section.shown > pre.text").textContent();
		await page.screenshot({ path: shots + "/note.png", fullPage: true });
		await page.click('nav a[href="/activity"]');
		await page.waitForSelector("figure.chart svg polyline");
		out.activityLines = await page.locator("figure.chart svg polyline").count();
		await page.screenshot({ path: shots + "/activity.png", fullPage: true });
		for (const [href, name] of [["/skills", "skills"], ["/pre-action", "pre-action"]]) {
			await page.click(`nav a[href="${href}"]`);
			await page.waitForSelector('nav a[aria-current="page"][href="' + href + '"]');
			await page.screenshot({ path: shots + "/" + name + ".png", fullPage: true });
		}
		console.log(JSON.stringify(out));
	} finally {
		await browser.close();
	}
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
