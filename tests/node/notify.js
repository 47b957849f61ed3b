// node-postgres LISTEN / NOTIFY against a running server. Usage: node notify.js PORT [USER DB]
// Prints "ok <json>" with what the listener received; a failure exits non-zero.
"use strict";

const { Client } = require("pg");

const port = Number(process.argv[2]);
const config = {
  host: "127.0.0.1",
  port,
  user: process.argv[3] || "tester",
  database: process.argv[4] || "hatidata",
};

async function main() {
  const listener = new Client(config);
  const notifier = new Client(config);
  await listener.connect();
  await notifier.connect();
  const got = [];
  const done = new Promise((resolve) => {
    listener.on("notification", (msg) => {
      got.push({ channel: msg.channel, payload: msg.payload, pidIsNotifier: msg.processId === notifier.processID });
      if (got.length === 2) resolve();
    });
  });
  await listener.query("LISTEN node_chan");
  // The listener stays idle: the notifications must arrive on their own.
  await notifier.query("NOTIFY node_chan, 'one'");
  await notifier.query("SELECT pg_notify($1, $2)", ["node_chan", "two"]);
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("timed out: " + JSON.stringify(got))), 5000));
  await Promise.race([done, timeout]);
  await listener.end();
  await notifier.end();
  process.stdout.write("ok " + JSON.stringify(got) + "\n");
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
