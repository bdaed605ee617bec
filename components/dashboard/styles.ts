/**
 * What the dashboard and landing page add to the shared page stylesheet: a wider column, a top
 * bar, tabs, forms and tables that turn into stacked rows on a phone (nothing scrolls sideways).
 */
export const DASHBOARD_CSS = `
main.wide { max-width: 68rem; }
.topbar { background: var(--card); border-bottom: 1px solid var(--line); }
.topbar .inner { align-items: center; display: flex; flex-wrap: wrap; gap: .5rem 1rem;
  margin: 0 auto; max-width: 68rem; padding: .5rem 1rem; }
.brand { color: var(--fg); font-weight: 700; text-decoration: none; }
.topbar .spacer { flex: 1; }
.who { color: var(--muted); font-size: .875rem; }
a { color: var(--accent); }
.crumbs { font-size: .925rem; margin: .25rem 0 0; }
.title-row { align-items: baseline; display: flex; flex-wrap: wrap; gap: .25rem .75rem; }
.title-row h1 { margin-bottom: .25rem; }
.skip-link { left: .5rem; position: absolute; top: -3rem; }
.skip-link:focus { background: var(--card); padding: .5rem .75rem; top: .5rem; z-index: 10; }
#content:focus { outline: none; }
details.ask { display: inline-block; position: relative; }
details.ask summary { color: var(--accent); cursor: pointer; list-style: none; text-decoration: underline; }
details.ask summary::-webkit-details-marker { display: none; }
details.ask[open] form { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: .5rem .75rem; position: absolute; right: 0; width: min(20rem, 90vw); z-index: 5; }
.tabs { border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .25rem 1.25rem;
  margin: .5rem 0 1rem; }
.tab-group { align-items: center; display: flex; flex-wrap: wrap; }
.group-label { color: var(--muted); font-size: .7rem; font-weight: 600; letter-spacing: .04em;
  margin-right: .25rem; text-transform: uppercase; }
.tabs a { border-bottom: 2px solid transparent; color: var(--muted); padding: .6rem .55rem;
  text-decoration: none; white-space: nowrap; }
.tabs a[aria-current="page"] { border-color: var(--accent); color: var(--fg); font-weight: 600; }
.grid { display: grid; gap: 0 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 19rem), 1fr)); }
.card h2 + p { margin-top: 0; }
dl.facts { display: grid; gap: .35rem 1rem; grid-template-columns: minmax(7rem, max-content) 1fr;
  margin: .5rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
label { display: block; font-weight: 600; margin: .85rem 0 .3rem; }
label.check { align-items: center; display: flex; font-weight: 400; gap: .5rem; }
input, select { background: var(--bg); border: 1px solid var(--line); border-radius: 8px;
  color: var(--fg); font: inherit; min-height: 44px; padding: .5rem .7rem; width: 100%; }
input[type="checkbox"], input[type="radio"] { min-height: 0; width: auto; }
input:focus, select:focus, button:focus-visible, a:focus-visible { outline: 2px solid var(--accent);
  outline-offset: 1px; }
.hint { color: var(--muted); font-size: .875rem; margin: .25rem 0 0; }
.hint.attention { color: var(--err); }
.notice ul { margin: .25rem 0 0; padding-left: 1.25rem; }
.field-error { color: var(--err); font-size: .875rem; font-weight: 600; margin: .25rem 0 0; }
input[aria-invalid="true"], select[aria-invalid="true"] { border: 2px solid var(--err); }
fieldset { border: 0; margin: 1rem 0 0; padding: 0; }
legend { font-weight: 600; padding: 0; }
.rows { display: grid; gap: .5rem; margin: .5rem 0; }
.row2 { display: grid; gap: .5rem; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); }
.row3 { align-items: end; display: grid; gap: .5rem; grid-template-columns: repeat(3, minmax(0, 1fr)) auto; }
.badge { background: var(--info-bg); border-radius: 999px; display: inline-block;
  font-size: .8rem; font-weight: 600; padding: .1rem .6rem; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.err { background: var(--err-bg); color: var(--err); }
.actions .badge { align-self: center; }
.button.danger, button.danger { background: var(--err); color: #fff; }
.copy button, button.copy { font-size: .875rem; min-height: 32px; padding: .25rem .75rem; }
.secret { background: var(--bg); border: 1px dashed var(--line); border-radius: 8px;
  display: block; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; margin: .5rem 0;
  overflow-wrap: anywhere; padding: .6rem .75rem; user-select: all; }
pre.secret, pre.statement { white-space: pre-wrap; }
/* Code keeps its lines: it scrolls inside its box rather than wrapping mid-statement. */
pre.code { overflow-x: auto; overflow-wrap: normal; tab-size: 2; user-select: text;
  white-space: pre; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9rem;
  overflow-wrap: anywhere; }
table.list { border-collapse: collapse; margin: .5rem 0; width: 100%; }
table.list th, table.list td { border-bottom: 1px solid var(--line); padding: .5rem .4rem;
  text-align: left; vertical-align: top; }
table.list th { color: var(--muted); font-size: .85rem; font-weight: 600; }
table.list td { overflow-wrap: anywhere; }
table.members button { white-space: nowrap; }
.empty { color: var(--muted); margin: .75rem 0; }
.visually-hidden { clip: rect(0 0 0 0); height: 1px; overflow: hidden; position: absolute;
  white-space: nowrap; width: 1px; }
.project-list { display: grid; gap: .75rem; list-style: none; margin: 0; padding: 0; }
.project-list li { background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: .85rem 1rem; }
.project-list a.name { font-size: 1.1rem; font-weight: 600; text-decoration: none; }
.made-list { list-style: none; margin: 0; padding: 0; }
.made-list label.check { margin: 0; }
.hero { padding: 1.5rem 0 .5rem; }
.hero h1 { font-size: 2rem; }
.lead { font-size: 1.1rem; }
@media (max-width: 40rem) {
  table.stack thead { display: none; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack td { border: 0; display: grid; gap: .75rem; grid-template-columns: 7rem 1fr;
    padding: .2rem 0; }
  table.stack td::before { color: var(--muted); content: attr(data-label); font-size: .85rem; }
  .tabs { gap: 0 .75rem; }
  .tabs a { padding: .5rem .45rem; }
  .row2, .row3 { grid-template-columns: 1fr; }
  .rows { gap: .75rem; }
  .rows .row2 { border-left: 3px solid var(--line); padding-left: .5rem; }
  .hero h1 { font-size: 1.6rem; }
}
/* Usage page charts (charts.tsx): SVGs scale to the card, phone-sized view boxes. */
figure.chart { margin: 1rem 0 0; }
.grid.usage { align-items: start; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26rem), 1fr)); }
figure.chart > svg { display: block; height: auto; width: 100%; }
.legend { color: var(--muted); display: flex; flex-wrap: wrap; font-size: .85rem; gap: .25rem 1rem; }
.legend .limit { color: #d97706; }
.meter { margin: .5rem 0; }
.meter-label { display: flex; flex-wrap: wrap; font-size: .925rem; gap: .25rem 1rem;
  justify-content: space-between; }
.meter > svg { display: block; height: .6rem; width: 100%; }
`;
