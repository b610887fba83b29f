/**
 * The actor demo (`npx tsx examples/actor-demo.ts`): a bank of 1 000 account actors on the real
 * runtime. Tellers transfer money between random accounts with ask (withdraw, then
 * deposit), a supervised auditor crashes now and then and is restarted with backoff, and
 * a progress line shows operations per second. At the end the audit checks that money
 * was conserved, and the system terminates cleanly.
 *
 * Flags: --seconds N (default 5), --accounts N (default 1000).
 */
import {
  type ActorRef,
  ActorSystem,
  ask,
  Behaviors,
  SupervisorStrategy,
} from "../src/actor/index.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";

type Account =
  | { type: "withdraw"; amount: number; replyTo: ActorRef<boolean> }
  | { type: "deposit"; amount: number }
  | { type: "balance"; replyTo: ActorRef<number> };

const account = (initial: number) =>
  Behaviors.setup<Account>(() => {
    let balance = initial;
    return Behaviors.receiveMessage<Account>((m) => {
      switch (m.type) {
        case "withdraw": {
          const ok = balance >= m.amount;
          if (ok) balance -= m.amount;
          m.replyTo.tell(ok);
          return;
        }
        case "deposit":
          balance += m.amount;
          return;
        case "balance":
          m.replyTo.tell(balance);
          return;
      }
    });
  });

type Audit = { type: "audit"; replyTo: ActorRef<number> };

const auditor = (accounts: ActorRef<Account>[]) =>
  Behaviors.setup<Audit>((ctx) => {
    let audits = 0;
    return Behaviors.receiveMessage<Audit>(async (m) => {
      audits++;
      if (audits % 3 === 0) throw new Error(`auditor glitch #${audits} (supervisor restarts it)`);
      const balances = await Promise.all(
        accounts.map((a) =>
          ask(a, (replyTo: ActorRef<number>) => ({ type: "balance", replyTo }), {
            timeoutMs: 2000,
          }),
        ),
      );
      m.replyTo.tell(balances.reduce((x, y) => x + y, 0));
      ctx.log.debug("audit done", { audits });
    });
  });

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

async function main(): Promise<void> {
  const seconds = arg("seconds", 5);
  const n = arg("accounts", 1000);
  const system = ActorSystem.create({
    name: "bank",
    runtime: createNodeRuntime({ logLevel: "warn" }),
  });
  const accounts = Array.from({ length: n }, (_, i) => system.spawn(account(1000), `account-${i}`));
  const audit = system.spawn(
    Behaviors.supervise(
      auditor(accounts),
      SupervisorStrategy.restartWithBackoff({
        minBackoffMs: 50,
        maxBackoffMs: 1000,
        randomFactor: 0.2,
      }),
    ),
    "auditor",
  );
  const expected = n * 1000;
  console.log(
    `shardkit actor demo: ${n} accounts x 1000 = ${expected} in the bank; running ${seconds} s`,
  );

  let transfers = 0;
  let refused = 0;
  let stop = false;
  const teller = async () => {
    while (!stop) {
      const from = accounts[Math.floor(Math.random() * n)] as ActorRef<Account>;
      const to = accounts[Math.floor(Math.random() * n)] as ActorRef<Account>;
      const amount = 1 + Math.floor(Math.random() * 100);
      const ok = await ask(
        from,
        (replyTo: ActorRef<boolean>) => ({ type: "withdraw", amount, replyTo }),
        {
          timeoutMs: 2000,
        },
      );
      if (ok) to.tell({ type: "deposit", amount });
      else refused++;
      transfers++;
    }
  };
  const tellers = Array.from({ length: 200 }, teller);

  const started = performance.now();
  let last = 0;
  let lastAt = started;
  let audits = 0;
  while (performance.now() - started < seconds * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    // Transfers in flight (withdrawn, deposit not yet processed) make a live audit differ a little.
    const total = await ask(audit, (replyTo: ActorRef<number>) => ({ type: "audit", replyTo }), {
      timeoutMs: 500,
    }).catch(() => undefined);
    audits++;
    const now = performance.now();
    const rate = Math.round(((transfers - last) * 1000) / (now - lastAt));
    last = transfers;
    lastAt = now;
    console.log(
      `t=${((now - started) / 1000).toFixed(1)}s transfers/s=${rate} total=${transfers} refused=${refused} ` +
        `live-audit=${total === undefined ? "(auditor restarting)" : total} auditor-restarts=${system.stats.failures}`,
    );
  }
  stop = true;
  await Promise.all(tellers);
  const finalTotal = await ask(audit, (replyTo: ActorRef<number>) => ({ type: "audit", replyTo }), {
    timeoutMs: 3000,
  }).catch(async () =>
    ask(audit, (replyTo: ActorRef<number>) => ({ type: "audit", replyTo }), { timeoutMs: 3000 }),
  );
  console.log(
    `done: ${transfers} transfers, ${audits} audits, auditor restarts=${system.stats.failures}; ` +
      `money ${finalTotal === expected ? "conserved" : "NOT conserved"} (${finalTotal}/${expected})`,
  );
  await system.terminate();
  if (finalTotal !== expected) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
