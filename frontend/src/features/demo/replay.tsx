import { History, Play, Square } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Button } from '@/components/ui/button';
import { toRunEvent, type RunEvent } from '@/features/runs/events';
import { emptyRun, reduceRun, type RunView } from '@/features/runs/run-reducer';
import { authFetch } from '@/lib/api';
import { readSse } from '@/lib/sse';

/** How long each kind of event holds the screen while a recording replays (ms): a readable pace. */
export function replayDelay(event: string): number {
  switch (event) {
    case 'model.delta':
      return 120;
    case 'step.code':
    case 'step.output':
      return 1200;
    case 'artifact':
      return 1000;
    case 'final':
      return 800;
    default:
      return 500;
  }
}

/**
 * Replays a recorded run's events (GET /runs/{id}/events: stored, so they come at once) in this
 * browser at a readable pace, into a view of its own: the history stays as stored.
 */
export function useReplay(runId: string | null) {
  const [view, setView] = useState<RunView | null>(null);
  const [playing, setPlaying] = useState(false);
  const stopped = useRef<AbortController | null>(null);

  const stop = useCallback(() => {
    stopped.current?.abort();
    stopped.current = null;
    setPlaying(false);
    setView(null);
  }, []);

  const start = useCallback(async () => {
    if (!runId) return;
    stopped.current?.abort();
    const ac = new AbortController();
    stopped.current = ac;
    const events: RunEvent[] = [];
    const res = await authFetch(`/api/v1/runs/${runId}/events`, { headers: { Accept: 'text/event-stream' }, signal: ac.signal });
    if (res.body) {
      await readSse(res.body, (m) => {
        const e = toRunEvent(m.event, m.data);
        if (e) events.push(e);
      });
    }
    if (ac.signal.aborted) return;
    let shown = emptyRun(runId);
    setView(shown);
    setPlaying(true);
    for (const e of events) {
      await new Promise((resolve) => setTimeout(resolve, replayDelay(e.event)));
      if (ac.signal.aborted) return;
      shown = reduceRun(shown, e);
      setView(shown);
    }
    setPlaying(false);
  }, [runId]);

  useEffect(() => () => stopped.current?.abort(), []);
  return { view, playing, start, stop };
}

/** Above a recorded session: what it is, and Replay (or Stop, then Show as stored). */
export function RecordedBanner({ playing, replayed, onReplay, onStop }: { playing: boolean; replayed: boolean; onReplay: () => void; onStop: () => void }) {
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-2 rounded-xl border border-primary/30 bg-primary/5 px-4 py-3 text-sm" data-testid="recorded-banner">
      <History className="size-4 shrink-0 text-primary" />
      <p className="min-w-0 flex-1 basis-64">
        <span className="font-medium">A recorded session.</span> This question was answered by the agent with a scripted model; replay it to see
        how a question is answered, step by step. Below it, run your own Python or SQL on the dataset: cells need no model.
      </p>
      {playing || replayed ? (
        <Button size="sm" variant="outline" onClick={onStop} data-testid="replay-stop">
          <Square className="fill-current" /> {playing ? 'Stop' : 'Show as stored'}
        </Button>
      ) : (
        <Button size="sm" onClick={onReplay} data-testid="replay">
          <Play /> Replay
        </Button>
      )}
    </div>
  );
}
