import { html } from "hono/html";
import type { InboxMessage } from "./messaging.ts";

/** The dev inbox: accepted messages, newest first, refreshed every few seconds. */
export function renderInboxPage(messages: InboxMessage[]) {
  const rows = [...messages].reverse().map((m) =>
    html`
      <li>
        <p><time>${new Date(m.receivedAt).toISOString()}</time> universe <b>${m.universeId}</b>
            topic <b>${m.topic}</b></p>
        <pre>${m.data === null ? m.message : JSON.stringify(m.data, null, 2)}</pre>
      </li>
    `
  );
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta http-equiv="refresh" content="3">
        <title>Messaging stand-in inbox</title>
        <style>
        body { font: 14px system-ui, sans-serif; margin: 2rem; }
        li { border-bottom: 1px solid #ddd; list-style: none; padding: .5rem 0; }
        pre { background: #f6f6f6; margin: .25rem 0; padding: .5rem; white-space: pre-wrap; }
      </style>
      </head>
      <body>
      <h1>Messaging inbox (${messages.length})</h1>
      ${messages.length === 0 ? html`<p>No messages yet.</p>` : html`<ul>${rows}</ul>`}
      </body>
    </html>
  `;
}
