import { Link } from 'react-router';
import type { FileVersionOut } from '@/client';

const SHOWN = 3;

/**
 * Under a version of a file: the questions that read it, newest first (links to their sessions), or
 * that none did. The server says which (`read_by`, from what the sandbox saw each question read).
 */
export function VersionUses({ projectId, version }: { projectId: string; version: FileVersionOut }) {
  const uses = version.read_by ?? [];
  const total = Math.max(version.read_by_total ?? 0, uses.length);
  if (!uses.length) return <p className="text-xs text-muted-foreground" data-testid="version-uses">No question has read this version.</p>;
  const shown = uses.slice(0, SHOWN);
  return (
    <p className="text-xs text-muted-foreground" data-testid="version-uses">
      Read by{' '}
      {shown.map((u, n) => (
        <span key={u.run_id}>
          {n > 0 && (n === shown.length - 1 && total <= SHOWN ? ' and ' : ', ')}
          <Link
            to={`/projects/${projectId}/sessions/${u.session_id}`}
            className="font-medium text-foreground underline-offset-4 hover:underline"
            title={`In “${u.session_title || 'Untitled session'}”`}
          >
            “{u.query.length > 60 ? `${u.query.slice(0, 57).trimEnd()}…` : u.query}”
          </Link>
        </span>
      ))}
      {total > SHOWN && ` and ${total - SHOWN} more question${total - SHOWN === 1 ? '' : 's'}`}
    </p>
  );
}
