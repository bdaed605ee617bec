/** The one stylesheet of server-rendered pages: readable on a phone first, no external assets. */
export const PAGE_CSS = `
:root { color-scheme: light dark; --fg: #1d1d1f; --muted: #5f6368; --bg: #f6f7f9; --card: #fff;
  --line: #dadce0; --accent: #4f46e5; --accent-fg: #fff; --ok: #137333; --ok-bg: #e6f4ea;
  --err: #b3261e; --err-bg: #fce8e6; --info-bg: #e8f0fe; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #9aa0a6; --bg: #121316;
  --card: #1e1f23; --line: #3c4043; --accent: #8b84ff; --accent-fg: #0b0b12; --ok: #81c995;
  --ok-bg: #10291a; --err: #f28b82; --err-bg: #3a1512; --info-bg: #172338; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { margin: 0 auto; max-width: 34rem; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: .5rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
p { margin: .5rem 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  margin: 1rem 0; padding: 1rem; }
.muted { color: var(--muted); font-size: .925rem; }
.steps, .reward-list { margin: .5rem 0; padding-left: 1.25rem; }
.steps li { margin: .25rem 0; }
.reward-list li { margin: .4rem 0; overflow-wrap: anywhere; }
.button, button { align-items: center; background: var(--accent); border: 0; border-radius: 10px;
  color: var(--accent-fg); cursor: pointer; display: inline-flex; font: inherit; font-weight: 600;
  gap: .5rem; justify-content: center; min-height: 44px; padding: .6rem 1.1rem;
  text-decoration: none; }
.button.secondary, button.secondary { background: transparent; border: 1px solid var(--line);
  color: var(--fg); }
.button.block, button.block { width: 100%; }
button:disabled, .button[aria-disabled="true"] { cursor: not-allowed; opacity: .5; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: .75rem; }
.notice { border-radius: 10px; margin: 1rem 0; overflow-wrap: anywhere; padding: .75rem 1rem; }
.notice.error { background: var(--err-bg); color: var(--err); }
.notice.success { background: var(--ok-bg); color: var(--ok); }
.notice.info { background: var(--info-bg); }
.player { align-items: center; display: flex; gap: .75rem; }
.avatar { background: var(--line); border-radius: 50%; flex: none; height: 48px; width: 48px; }
.address { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9rem;
  overflow-wrap: anywhere; }
.wallets { display: grid; gap: .5rem; list-style: none; margin: .75rem 0 0; padding: 0; }
.wallets img { height: 24px; width: 24px; }
form.inline { display: inline; }
.linkish { background: none; border: 0; color: var(--accent); min-height: 0; padding: 0;
  text-decoration: underline; font-weight: 400; }
`;
