/** One Server-Sent Events message, as framed on the wire. */
export type SseMessage = { event: string; id: string | null; data: string };

/**
 * Incremental text/event-stream parser (WHATWG rules): feed it chunks cut anywhere — inside a
 * line, between CR and LF, inside a multi-byte character — and it returns whole messages.
 * Comment lines (`: ping`) are heartbeats and produce nothing.
 */
export class SseParser {
  private decoder = new TextDecoder();
  private buffer = '';
  private pendingCR = false;
  private event = '';
  private data: string[] = [];
  private id: string | null = null;
  private hasData = false;

  feed(chunk: Uint8Array | string): SseMessage[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      const line = this.buffer.slice(start, i);
      if (c === '\r') {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === '\n') i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      if (!this.hasData) {
        this.event = '';
        return null;
      }
      const msg = { event: this.event || 'message', id: this.id, data: this.data.join('\n') };
      this.event = '';
      this.data = [];
      this.hasData = false;
      return msg;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'id' && !value.includes('\0')) this.id = value;
    return null;
  }
}

/** Reads a fetch Response body as SSE, calling onMessage for each message until the body ends. */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onMessage: (m: SseMessage) => void,
): Promise<void> {
  const parser = new SseParser();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const m of parser.feed(value)) onMessage(m);
    }
  } finally {
    reader.releaseLock();
  }
}

/** The longest wait before a dropped live stream is opened again. */
export const RECONNECT_MAX_MS = 15_000;

/** Waits `ms`, or less when `signal` aborts first (it resolves either way). */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
