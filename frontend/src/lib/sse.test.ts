import { describe, expect, it } from 'vitest';
import { readSse, SseParser, type SseMessage } from './sse';

const WIRE =
  ': ping\n\n' +
  'event: run.started\nid: 1\ndata: {"run_id":"r","seq":1}\n\n' +
  ': ping\n' +
  'event: model.delta\r\nid: 2\r\ndata: {"run_id":"r","seq":2,\r\ndata: "text":"héllo ✓"}\r\n\r\n' +
  'event: final\rid: 3\rdata: {"run_id":"r","seq":3}\r\r';

const EXPECTED: SseMessage[] = [
  { event: 'run.started', id: '1', data: '{"run_id":"r","seq":1}' },
  { event: 'model.delta', id: '2', data: '{"run_id":"r","seq":2,\n"text":"héllo ✓"}' },
  { event: 'final', id: '3', data: '{"run_id":"r","seq":3}' },
];

const bytes = new TextEncoder().encode(WIRE);

describe('SseParser', () => {
  it('parses events, multi-line data, all line endings, and ignores heartbeats', () => {
    expect(new SseParser().feed(WIRE)).toEqual(EXPECTED);
  });

  it('gives the same result whatever byte the stream is cut at', () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const p = new SseParser();
      const out = [...p.feed(bytes.slice(0, cut)), ...p.feed(bytes.slice(cut))];
      expect(out, `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  it('copes with one byte at a time', () => {
    const p = new SseParser();
    const out: SseMessage[] = [];
    for (const b of bytes) out.push(...p.feed(new Uint8Array([b])));
    expect(out).toEqual(EXPECTED);
  });

  it('produces nothing for a stream of heartbeats and no message without data', () => {
    const p = new SseParser();
    expect(p.feed(': ping\n\n: ping\n\nevent: x\n\n')).toEqual([]);
  });

  it('keeps an incomplete message until its blank line arrives', () => {
    const p = new SseParser();
    expect(p.feed('event: a\ndata: 1\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'a', id: null, data: '1' }]);
  });
});

describe('readSse', () => {
  it('reads a ReadableStream in arbitrary chunks', async () => {
    const chunks = [bytes.slice(0, 7), bytes.slice(7, 60), bytes.slice(60, 61), bytes.slice(61)];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        chunks.forEach((x) => c.enqueue(x));
        c.close();
      },
    });
    const out: SseMessage[] = [];
    await readSse(body, (m) => out.push(m));
    expect(out).toEqual(EXPECTED);
  });
});
