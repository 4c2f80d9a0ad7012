import { useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';

/** A question to ask on arriving in a session (an edited earlier question, asked in its branch). */
export type ArrivalQuestion = { query: string; model: string | null; fileIds: string[] };

/** What the session does when it is opened from a branch action: ask, or focus an empty box; and a note to show. */
export type Arrival = { ask?: ArrivalQuestion; focus?: boolean; note?: string };

const arrivalOf = (state: unknown): Arrival | null =>
  state && typeof state === 'object' && 'arrival' in state ? ((state as { arrival: Arrival }).arrival ?? null) : null;

/**
 * Carries out the arrival once the session's history has loaded (asks, or focuses the box), then
 * takes it out of the page's history entry so a reload does not ask again. Returns the note, kept
 * for as long as the session shows.
 */
export function useArrival(loaded: boolean, ask: (q: ArrivalQuestion) => unknown, focus: () => void): string | null {
  const location = useLocation();
  const navigate = useNavigate();
  const arrival = arrivalOf(location.state);
  const done = useRef<Arrival | null>(null);
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    if (!loaded || !arrival || done.current === arrival) return;
    done.current = arrival;
    if (arrival.note) setNote(arrival.note);
    if (arrival.ask) void ask(arrival.ask);
    else if (arrival.focus) focus();
    void navigate(location.pathname + location.search + location.hash, { replace: true, state: null });
  }, [loaded, arrival, ask, focus, navigate, location.pathname, location.search, location.hash]);
  return note;
}
