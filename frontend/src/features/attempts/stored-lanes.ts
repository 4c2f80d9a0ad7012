import { useQuery } from '@tanstack/react-query';
import { toRunEvent, type RunEvent } from '@/features/runs/events';
import { emptyRun, reduceRunEvents } from '@/features/runs/run-reducer';
import { authFetch } from '@/lib/api';
import { readSse } from '@/lib/sse';
import type { AttemptLane } from './lanes';

/**
 * The attempts' lanes of a finished run, rebuilt from its stored events (GET /runs/{id}/events
 * replays a finished run and closes): a stored run lists its attempts' answers, not their steps.
 */
export function useStoredLanes(runId: string, enabled: boolean) {
  return useQuery({
    queryKey: ['runs', runId, 'attempt-lanes'] as const,
    enabled,
    staleTime: Infinity,
    queryFn: async ({ signal }): Promise<AttemptLane[]> => {
      const res = await authFetch(`/api/v1/runs/${runId}/events?after=0`, { headers: { Accept: 'text/event-stream' }, signal });
      const events: RunEvent[] = [];
      if (res.body) {
        await readSse(res.body, (m) => {
          const e = toRunEvent(m.event, m.data);
          if (e) events.push(e);
        });
      }
      return reduceRunEvents(emptyRun(runId), events).attempts;
    },
  });
}
