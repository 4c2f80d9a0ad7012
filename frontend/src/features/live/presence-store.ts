import { create } from 'zustand';
import type { Person } from '@/client';

/** Who has each open session open now, as its live stream last said (session id → people). */
type PresenceState = {
  bySession: Record<string, Person[]>;
  set: (sessionId: string, users: Person[]) => void;
  clear: (sessionId: string) => void;
};

export const usePresenceStore = create<PresenceState>((set) => ({
  bySession: {},
  set: (sessionId, users) => set((s) => ({ bySession: { ...s.bySession, [sessionId]: users } })),
  clear: (sessionId) =>
    set((s) => {
      const next = { ...s.bySession };
      delete next[sessionId];
      return { bySession: next };
    }),
}));
