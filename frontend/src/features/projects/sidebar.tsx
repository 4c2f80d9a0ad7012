import { useQuery } from '@tanstack/react-query';
import {
  BarChart3,
  ChevronRight,
  Columns2,
  FolderClosed,
  FolderOpen,
  GitBranch,
  History,
  MessageSquare,
  MoreHorizontal,
  Pencil,
  Plus,
  Trash2,
  UsersRound,
} from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { ProjectOut, SessionOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { NameDialog } from '@/components/name-dialog';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { UserArea } from '@/features/auth/user-area';
import { NotificationBell } from '@/features/notifications/bell';
import { SearchButton } from '@/features/search/search-dialog';
import { MembersDialog } from '@/features/members/members-dialog';
import { ReviewBadge } from '@/features/sessions/autonomy-switch';
import { DeleteSessionDialog } from '@/features/branches/delete-dialog';
import { titleUnder, useSessionTree } from '@/features/branches/session-tree';
import { useCreateSession, useRenameSession } from '@/features/sessions/mutations';
import { sessionsQuery } from '@/features/sessions/queries';
import { cn } from '@/lib/utils';
import { useCreateProject, useDeleteProject, useRenameProject } from './mutations';
import { projectsQuery } from './queries';
import { blockedFor, RoleBadge, type Role } from './role';

type Dialogs =
  | { kind: 'new-project' }
  | { kind: 'rename-project'; project: ProjectOut }
  | { kind: 'delete-project'; project: ProjectOut }
  | { kind: 'members'; project: ProjectOut }
  | { kind: 'rename-session'; session: SessionOut }
  | { kind: 'delete-session'; session: SessionOut; branches: number }
  | null;

type MenuAction = { label: string; icon: typeof Pencil; onSelect: () => void; blocked?: string | null; destructive?: boolean };

/** A row's actions; one the user's role does not allow stays in the menu, disabled, and the menu says why. */
function RowMenu({ label, actions }: { label: string; actions: MenuAction[] }) {
  const reasons = [...new Set(actions.flatMap((a) => (a.blocked ? [a.blocked] : [])))];
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="icon-sm"
          className="opacity-60 group-hover:opacity-100 focus-visible:opacity-100 data-[state=open]:opacity-100"
          aria-label={`Actions for ${label}`}
        >
          <MoreHorizontal />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent className="max-w-72">
        {actions.map(({ label: text, icon: Icon, onSelect, blocked, destructive }) => (
          <DropdownMenuItem key={text} destructive={destructive} disabled={!!blocked} title={blocked ?? undefined} onSelect={onSelect}>
            <Icon /> {text}
          </DropdownMenuItem>
        ))}
        {reasons.length > 0 && (
          <>
            <DropdownMenuSeparator />
            {reasons.map((r) => (
              <p key={r} className="px-2 py-1 text-xs text-muted-foreground" data-testid="menu-blocked-reason">
                {r}
              </p>
            ))}
          </>
        )}
      </DropdownMenuContent>
    </DropdownMenu>
  );
}

function SessionLinks({
  projectId,
  role,
  onDialog,
  onNavigate,
}: {
  projectId: string;
  role: Role;
  onDialog: (d: Dialogs) => void;
  onNavigate?: () => void;
}) {
  const { sessionId } = useParams();
  const blocked = blockedFor(role, 'editor', 'rename, delete or start sessions');
  const sessions = useQuery(sessionsQuery(projectId));
  const navigate = useNavigate();
  const create = useCreateSession(projectId);
  const { rows, questions, byId, toggle } = useSessionTree(sessions.data?.items ?? []);
  return (
    <div className="ml-4 border-l pl-2" data-testid="session-tree">
      {rows.map(({ session: s, depth, children, descendants, open }) => {
        const question = questions.get(s.id);
        const Icon = depth > 0 ? GitBranch : MessageSquare;
        return (
          <div
            key={s.id}
            className={cn(
              'group flex items-center rounded-md pr-1 text-sm hover:bg-muted',
              s.id === sessionId && 'bg-accent font-medium text-foreground',
            )}
            // Each level of branches a step further in; deep trees stop indenting so titles keep room.
            style={{ paddingLeft: `${Math.min(depth, 4) * 0.75}rem` }}
            data-testid="session-row"
            data-depth={depth}
            data-session-id={s.id}
          >
            {children > 0 ? (
              <button
                type="button"
                className="-mr-1 flex size-6 shrink-0 cursor-pointer items-center justify-center rounded text-muted-foreground hover:text-foreground"
                aria-expanded={open}
                aria-label={`${open ? 'Hide' : 'Show'} the ${descendants} branch${descendants === 1 ? '' : 'es'} of ${s.title || 'Untitled session'}`}
                onClick={() => toggle(s.id)}
              >
                <ChevronRight className={cn('size-3.5 transition-transform', open && 'rotate-90')} />
              </button>
            ) : (
              depth > 0 && <span className="w-5 shrink-0" />
            )}
            <Link
              to={`/projects/${projectId}/sessions/${s.id}`}
              onClick={onNavigate}
              aria-current={s.id === sessionId ? 'page' : undefined}
              className="flex min-w-0 flex-1 items-center gap-2 px-2 py-1.5"
            >
              <Icon className={cn('size-3.5 shrink-0 text-muted-foreground', depth > 0 && 'text-primary/70')} />
              <span className="min-w-0 flex-1">
                <span className="block truncate" title={s.title || undefined}>
                  {titleUnder(s, byId.get(s.parent_session_id ?? ''))}
                </span>
                {question && (
                  <span className="block truncate text-xs font-normal text-muted-foreground" data-testid="branch-after" title={`Branched after: ${question}`}>
                    after: {question}
                  </span>
                )}
                {!open && descendants > 0 && (
                  <span className="block text-xs font-normal text-muted-foreground">
                    {descendants} branch{descendants === 1 ? '' : 'es'}
                  </span>
                )}
              </span>
              {s.autonomy === 'review' && <ReviewBadge />}
            </Link>
            <RowMenu
              label={s.title}
              actions={[
                ...(s.parent_session_id
                  ? [
                      {
                        label: 'Compare with parent',
                        icon: Columns2,
                        onSelect: () => {
                          onNavigate?.();
                          void navigate(`/projects/${projectId}/compare/${s.parent_session_id}/${s.id}`);
                        },
                      },
                    ]
                  : []),
                { label: 'Rename', icon: Pencil, blocked, onSelect: () => onDialog({ kind: 'rename-session', session: s }) },
                {
                  label: 'Delete',
                  icon: Trash2,
                  blocked,
                  destructive: true,
                  onSelect: () => onDialog({ kind: 'delete-session', session: s, branches: children }),
                },
              ]}
            />
          </div>
        );
      })}
      <button
        type="button"
        hidden={!!blocked}
        className="flex w-full cursor-pointer items-center gap-2 rounded-md px-2 py-1.5 text-sm text-muted-foreground hover:bg-muted hover:text-foreground"
        onClick={() =>
          create.mutate(undefined, {
            onSuccess: (s) => {
              onNavigate?.();
              void navigate(`/projects/${projectId}/sessions/${s.id}`);
            },
          })
        }
      >
        <Plus className="size-3.5" /> New session
      </button>
    </div>
  );
}

function SessionDialogs({ dialog, setDialog }: { dialog: Dialogs; setDialog: (d: Dialogs) => void }) {
  const session = dialog && 'session' in dialog ? dialog.session : null;
  const projectId = session?.project_id ?? '';
  const rename = useRenameSession(projectId);
  const { sessionId } = useParams();
  const navigate = useNavigate();
  return (
    <>
      <NameDialog
        open={dialog?.kind === 'rename-session'}
        onOpenChange={(o) => !o && setDialog(null)}
        title="Rename session"
        label="Title"
        initial={session?.title ?? ''}
        submitLabel="Save"
        pending={rename.isPending}
        onSubmit={(title) => session && rename.mutate({ id: session.id, title }, { onSuccess: () => setDialog(null) })}
      />
      <DeleteSessionDialog
        session={dialog?.kind === 'delete-session' ? dialog.session : null}
        branches={dialog?.kind === 'delete-session' ? dialog.branches : 0}
        onClose={() => setDialog(null)}
        onDeleted={(deleted) => {
          if (deleted.includes(sessionId ?? '')) void navigate(`/projects/${projectId}`);
        }}
      />
    </>
  );
}

export function Sidebar({ onNavigate }: { onNavigate?: () => void }) {
  const { projectId } = useParams();
  const navigate = useNavigate();
  const projects = useQuery(projectsQuery());
  const [dialog, setDialog] = useState<Dialogs>(null);
  const create = useCreateProject();
  const rename = useRenameProject();
  const del = useDeleteProject();
  const project = dialog && 'project' in dialog ? dialog.project : null;

  return (
    <nav className="flex h-full flex-col bg-sidebar" aria-label="Projects and sessions">
      <div className="flex items-center gap-2 px-4 py-4">
        <Link to="/" className="flex items-center gap-2 font-semibold" onClick={onNavigate}>
          <span className="flex size-7 items-center justify-center rounded-md bg-primary text-primary-foreground">
            <BarChart3 className="size-4" />
          </span>
          Workbench
        </Link>
        <NotificationBell className="ml-auto" />
      </div>
      <div className="px-3 pb-3">
        <SearchButton />
      </div>
      <div className="flex items-center justify-between px-4 pb-1">
        <span className="text-xs font-medium tracking-wide text-muted-foreground uppercase">Projects</span>
        <Button variant="ghost" size="icon-sm" aria-label="New project" onClick={() => setDialog({ kind: 'new-project' })}>
          <Plus />
        </Button>
      </div>
      <div className="flex-1 space-y-0.5 overflow-y-auto px-2 pb-4">
        {projects.isLoading && <p className="px-2 py-1 text-sm text-muted-foreground">Loading…</p>}
        {projects.data?.items.length === 0 && (
          <p className="px-2 py-1 text-sm text-muted-foreground">No projects yet. Create one to upload data.</p>
        )}
        {projects.data?.items.map((p) => {
          const active = p.id === projectId;
          return (
            <div key={p.id}>
              <div className={cn('group flex items-center rounded-md pr-1 hover:bg-muted', active && 'text-foreground')}>
                <Link
                  to={`/projects/${p.id}`}
                  onClick={onNavigate}
                  className={cn('flex min-w-0 flex-1 items-center gap-2 px-2 py-1.5 text-sm', active && 'font-medium')}
                >
                  <ChevronRight className={cn('size-3.5 shrink-0 text-muted-foreground transition-transform', active && 'rotate-90')} />
                  {active ? <FolderOpen className="size-4 shrink-0 text-primary" /> : <FolderClosed className="size-4 shrink-0 text-muted-foreground" />}
                  <span className="truncate">{p.name}</span>
                  <RoleBadge role={p.role} className="ml-auto" />
                </Link>
                <RowMenu
                  label={p.name}
                  actions={[
                    { label: 'Members…', icon: UsersRound, onSelect: () => setDialog({ kind: 'members', project: p }) },
                    {
                      label: 'Activity',
                      icon: History,
                      blocked: blockedFor(p.role, 'owner', 'read the activity log'),
                      onSelect: () => {
                        onNavigate?.();
                        void navigate(`/projects/${p.id}/activity`);
                      },
                    },
                    {
                      label: 'Rename',
                      icon: Pencil,
                      blocked: blockedFor(p.role, 'editor', 'rename the project'),
                      onSelect: () => setDialog({ kind: 'rename-project', project: p }),
                    },
                    {
                      label: 'Delete',
                      icon: Trash2,
                      destructive: true,
                      blocked: blockedFor(p.role, 'owner', 'delete the project'),
                      onSelect: () => setDialog({ kind: 'delete-project', project: p }),
                    },
                  ]}
                />
              </div>
              {active && <SessionLinks projectId={p.id} role={p.role} onDialog={setDialog} onNavigate={onNavigate} />}
            </div>
          );
        })}
      </div>
      <UserArea onNavigate={onNavigate} />

      <NameDialog
        open={dialog?.kind === 'new-project'}
        onOpenChange={(o) => !o && setDialog(null)}
        title="New project"
        description="A project holds datasets and the analysis sessions about them."
        label="Name"
        submitLabel="Create project"
        pending={create.isPending}
        onSubmit={(name) =>
          create.mutate(name, {
            onSuccess: (p) => {
              setDialog(null);
              onNavigate?.();
              void navigate(`/projects/${p.id}`);
            },
          })
        }
      />
      <NameDialog
        open={dialog?.kind === 'rename-project'}
        onOpenChange={(o) => !o && setDialog(null)}
        title="Rename project"
        label="Name"
        initial={project?.name ?? ''}
        submitLabel="Save"
        pending={rename.isPending}
        onSubmit={(name) => project && rename.mutate({ id: project.id, name }, { onSuccess: () => setDialog(null) })}
      />
      <ConfirmDialog
        open={dialog?.kind === 'delete-project'}
        onOpenChange={(o) => !o && setDialog(null)}
        title="Delete project?"
        description={`“${project?.name}” with all its datasets and sessions will be deleted. This cannot be undone.`}
        pending={del.isPending}
        onConfirm={() =>
          project &&
          del.mutate(project.id, {
            onSuccess: () => {
              setDialog(null);
              if (project.id === projectId) void navigate('/');
            },
          })
        }
      />
      <SessionDialogs dialog={dialog} setDialog={setDialog} />
      {project && (
        <MembersDialog project={project} open={dialog?.kind === 'members'} onOpenChange={(o) => !o && setDialog(null)} />
      )}
    </nav>
  );
}
