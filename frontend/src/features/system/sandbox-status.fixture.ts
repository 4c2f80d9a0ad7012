import type { SandboxStatusOut } from '@/client';

/** A sandbox status for tests: isolated and available unless `over` says otherwise. */
export const sandboxStatus = (over: Partial<SandboxStatusOut> = {}): SandboxStatusOut => ({
  isolation: 'required',
  mechanism: 'bubblewrap',
  location: 'backend',
  available: true,
  isolated: true,
  detail: 'Code runs in bubblewrap.',
  fix: null,
  seccomp: [],
  ...over,
});
