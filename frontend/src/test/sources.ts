import type { SourceOut } from '@/client';

/** A source as GET /projects/{id}/sources lists it: a checked PostgreSQL database unless `over` says otherwise. */
export const storedSource = (over: Partial<SourceOut> = {}): SourceOut => ({
  id: 's1',
  project_id: 'p',
  name: 'warehouse',
  kind: 'postgresql',
  display_url: 'postgresql://ana:***@db.internal:5432/sales',
  description: '',
  status: 'ready',
  status_detail: 'Connected to PostgreSQL 17.2: 12 tables. The role can write: every query runs in a read-only transaction.',
  access: 'read_only_transaction',
  server_version: 'PostgreSQL 17.2',
  table_count: 12,
  schema_truncated: false,
  checked_at: '2026-03-01T10:00:00Z',
  created_at: '2026-03-01T10:00:00Z',
  updated_at: '2026-03-01T10:00:00Z',
  ...over,
});
