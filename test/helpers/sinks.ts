/**
 * Real receivers on loopback for the notification tests: an HTTP sink (webhooks, Slack-compatible) that
 * records each request and can be made to fail or hold its answers, and an SMTP server (smtp-server) that
 * keeps every mail it is given.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
  /** The status it was answered with; unset while it is held. */
  answered?: number;
}

export interface HttpSink {
  url: string;
  received: Received[];
  /** The answer's status (default 200); 500 makes the channel fail. */
  status: number;
  /** While set, requests are recorded but not answered until `release()`. */
  hold: boolean;
  /** Hold (as `hold`) every request from this many received on. */
  holdFrom: number;
  release(): void;
  /** Resolves when `n` requests have arrived. */
  arrived(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHttpSink(): Promise<HttpSink> {
  const waiting: { n: number; resolve(): void }[] = [];
  const held: (() => void)[] = [];
  const sink: HttpSink = {
    url: '',
    received: [],
    status: 200,
    hold: false,
    holdFrom: Infinity,
    release() {
      for (const f of held.splice(0)) f();
    },
    arrived(n) {
      if (sink.received.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ n, resolve }));
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        // not JSON: kept as text
      }
      const rec: Received = { path: req.url ?? '/', headers: req.headers, body, json };
      sink.received.push(rec);
      for (const w of waiting.filter((x) => sink.received.length >= x.n)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
      const answer = () => {
        rec.answered = sink.status;
        res.writeHead(sink.status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (sink.hold || sink.received.length >= sink.holdFrom) held.push(answer);
      else answer();
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
}

export interface SmtpSink {
  port: number;
  mails: Mail[];
  arrived(n: number): Promise<void>;
  close(): Promise<void>;
}

/** An SMTP server on loopback, no TLS, any (or no) login accepted. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const waiting: { n: number; resolve(): void }[] = [];
  const sink: SmtpSink = {
    port: 0,
    mails: [],
    arrived(n) {
      if (sink.mails.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ n, resolve }));
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(raw)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
        sink.mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw, subject });
        for (const w of waiting.filter((x) => sink.mails.length >= x.n)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  sink.port = (server.server.address() as AddressInfo).port;
  return sink;
}
