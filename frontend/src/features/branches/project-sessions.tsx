import { ChevronRight, GitBranch, MessageSquare } from 'lucide-react';
import { Link } from 'react-router';
import type { SessionOut } from '@/client';
import { ReviewBadge } from '@/features/sessions/autonomy-switch';
import { cn, formatDate } from '@/lib/utils';
import { titleUnder, useSessionTree } from './session-tree';

/** The project page's list of sessions: branches under their parent (folding away), each with the
 * question it diverges after. */
export function ProjectSessionList({ projectId, sessions }: { projectId: string; sessions: SessionOut[] }) {
  const { rows, questions, byId, toggle } = useSessionTree(sessions);
  return (
    <ul className="divide-y overflow-hidden rounded-lg border bg-card" data-testid="project-sessions">
      {rows.map(({ session: s, depth, children, descendants, open }) => {
        const question = questions.get(s.id);
        const Icon = depth > 0 ? GitBranch : MessageSquare;
        const title = s.title || 'Untitled session';
        return (
          <li
            key={s.id}
            className="flex items-center hover:bg-muted/50"
            style={{ paddingLeft: `${Math.min(depth, 4) * 1.25}rem` }}
            data-testid="project-session-row"
            data-depth={depth}
            data-session-id={s.id}
          >
            {children > 0 ? (
              <button
                type="button"
                className="ml-2 flex size-7 shrink-0 cursor-pointer items-center justify-center rounded text-muted-foreground hover:text-foreground"
                aria-expanded={open}
                aria-label={`${open ? 'Hide' : 'Show'} the ${descendants} branch${descendants === 1 ? '' : 'es'} of ${title}`}
                onClick={() => toggle(s.id)}
              >
                <ChevronRight className={cn('size-4 transition-transform', open && 'rotate-90')} />
              </button>
            ) : (
              <span className="ml-2 w-7 shrink-0" />
            )}
            <Link to={`/projects/${projectId}/sessions/${s.id}`} className="flex min-w-0 flex-1 items-center gap-3 py-3 pr-4 pl-1 text-sm">
              <Icon className={cn('size-4 shrink-0 text-muted-foreground', depth > 0 && 'text-primary/70')} />
              <span className="min-w-0 flex-1">
                <span className="block truncate font-medium" title={s.title || undefined}>
                  {titleUnder(s, byId.get(s.parent_session_id ?? ''))}
                </span>
                {question && (
                  <span className="block truncate text-xs text-muted-foreground" data-testid="project-branch-after">
                    after: {question}
                  </span>
                )}
                {!open && descendants > 0 && (
                  <span className="block text-xs text-muted-foreground">
                    {descendants} branch{descendants === 1 ? '' : 'es'}
                  </span>
                )}
              </span>
              {s.autonomy === 'review' && <ReviewBadge />}
              {/* A branch's row gives its title the room on a phone; the parent's row keeps the date. */}
              <span className={cn('shrink-0 text-xs text-muted-foreground', depth > 0 && 'hidden sm:inline')}>{formatDate(s.updated_at)}</span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
