import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { AlertCircle, AlertTriangle, CheckCircle2, Download, FileSpreadsheet, FileText, History, Loader2, Trash2, Upload, X } from 'lucide-react';
import { useRef, useState } from 'react';
import { deleteFile, type FileOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { GuardedButton } from '@/components/guarded-button';
import { Button } from '@/components/ui/button';
import { blockedFor, useProjectRole } from '@/features/projects/role';
import { downloadUrl } from '@/lib/api';
import { storageKeys } from '@/features/storage/queries';
import { cn, formatBytes, formatDate } from '@/lib/utils';
import { FileCheckBadge, FileDetails, hasProblem } from './file-details';
import { fileKeys, filesQuery, versionsQuery } from './queries';
import { useReplaceConfirm } from './replace-confirm';
import { uploadFile } from './upload';
import { VersionUses } from './version-uses';

type UploadItem = { key: string; name: string; size: number; progress: number; error: string | null; done: boolean; file?: FileOut };

function useUploads(projectId: string) {
  const qc = useQueryClient();
  const [items, setItems] = useState<UploadItem[]>([]);
  const update = (key: string, patch: Partial<UploadItem>) =>
    setItems((xs) => xs.map((x) => (x.key === key ? { ...x, ...patch } : x)));
  const add = (files: File[]) => {
    for (const file of files) {
      const key = `${file.name}-${file.size}-${Math.random()}`;
      setItems((xs) => [...xs, { key, name: file.name, size: file.size, progress: 0, error: null, done: false }]);
      uploadFile(projectId, file, (p) => update(key, { progress: p }))
        .then((uploaded) => {
          update(key, { done: true, progress: 1, file: uploaded });
          // A re-upload is a new version: the list shows its time, and the versions list grows.
          void qc.invalidateQueries({ queryKey: fileKeys.project(projectId) });
          void qc.invalidateQueries({ queryKey: fileKeys.allVersions });
          void qc.invalidateQueries({ queryKey: storageKeys.mine });
          setTimeout(() => setItems((xs) => xs.filter((x) => x.key !== key)), 2500);
        })
        .catch((e: Error) => update(key, { error: e.message }));
    }
  };
  const dismiss = (key: string) => setItems((xs) => xs.filter((x) => x.key !== key));
  return { items, add, dismiss };
}

/** The versions kept of a file, each with its upload time and size, and a download. */
function Versions({ file }: { file: FileOut }) {
  const versions = useQuery(versionsQuery(file.id));
  if (versions.isLoading)
    return (
      <p className="flex items-center gap-2 border-t p-3 text-sm text-muted-foreground">
        <Loader2 className="size-4 animate-spin" /> Loading versions…
      </p>
    );
  if (versions.error) return <p className="border-t p-3 text-sm text-destructive">Could not list the versions: {versions.error.message}</p>;
  const stem = file.name.replace(/(\.[^.]*)?$/, '');
  const ext = file.name.slice(stem.length);
  return (
    <ul className="divide-y border-t text-sm" aria-label={`Versions of ${file.name}`} data-testid="file-versions">
      {versions.data?.map((v) => (
        <li key={v.version} className="flex flex-wrap items-center gap-x-3 gap-y-0.5 px-3 py-1.5" data-version={v.version}>
          <span className="w-8 shrink-0 font-medium tabular-nums">v{v.version}</span>
          {/* The badge never shrinks: on a narrow screen it wraps under the date rather than being cut. */}
          <span className="flex min-w-0 flex-1 flex-wrap items-center gap-x-2 gap-y-0.5 text-xs text-muted-foreground">
            <span className="min-w-0">
              {formatDate(v.created_at)} · {formatBytes(v.size)}
            </span>
            {v.current && (
              <span
                className="shrink-0 rounded bg-primary/10 px-1.5 py-0.5 text-[11px] font-medium whitespace-nowrap text-primary"
                data-testid="version-current"
              >
                current
              </span>
            )}
          </span>
          <Button
            variant="ghost"
            size="icon-sm"
            aria-label={`Download version ${v.version} of ${file.name}`}
            onClick={() =>
              void downloadUrl(
                v.current ? `/api/v1/files/${file.id}/content` : `/api/v1/files/${file.id}/versions/${v.version}/content`,
                v.current ? file.name : `${stem} (v${v.version})${ext}`,
              )
            }
          >
            <Download />
          </Button>
          <div className="basis-full pl-11">
            <VersionUses projectId={file.project_id} version={v} />
          </div>
        </li>
      ))}
    </ul>
  );
}

export function DatasetPanel({ projectId }: { projectId: string }) {
  const files = useQuery(filesQuery(projectId));
  const uploads = useUploads(projectId);
  // A name already in the project asks before it becomes the file's new version.
  const replace = useReplaceConfirm(files.data?.items ?? [], uploads.add);
  const input = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const [openId, setOpenId] = useState<string | null>(null);
  const [versionsId, setVersionsId] = useState<string | null>(null);
  const [toDelete, setToDelete] = useState<FileOut | null>(null);
  const role = useProjectRole();
  const uploadBlocked = blockedFor(role, 'editor', 'upload files');
  const qc = useQueryClient();
  const del = useMutation({
    mutationFn: async (id: string) => {
      await deleteFile({ path: { file_id: id } });
    },
    onSuccess: () => {
      setToDelete(null);
      void qc.invalidateQueries({ queryKey: fileKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: storageKeys.mine });
    },
  });

  return (
    <section aria-labelledby="datasets-heading" className="space-y-3">
      <div className="flex items-center justify-between">
        <h2 id="datasets-heading" className="text-base font-semibold">
          Datasets
        </h2>
        <GuardedButton variant="outline" size="sm" blockedBecause={uploadBlocked} onClick={() => input.current?.click()}>
          <Upload /> Upload files
        </GuardedButton>
      </div>
      {!uploadBlocked && (
        <div
          role="button"
          tabIndex={0}
          aria-label="Drop files here or press to choose files"
          onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && input.current?.click()}
          onClick={() => input.current?.click()}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            replace.offer(Array.from(e.dataTransfer.files));
          }}
          className={cn(
            'flex cursor-pointer flex-col items-center justify-center gap-1 rounded-xl border-2 border-dashed px-4 py-6 text-center text-sm text-muted-foreground transition-colors hover:border-primary/50 hover:bg-muted/40',
            dragging && 'border-primary bg-accent',
          )}
        >
          <Upload className="size-5" />
          <span>
            <span className="font-medium text-foreground">Drop files here</span> or click to choose
          </span>
          <span className="text-xs">CSV, Excel, JSON, Parquet and other data files</span>
        </div>
      )}
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="file-input"
        onChange={(e) => {
          replace.offer(Array.from(e.target.files ?? []));
          e.target.value = '';
        }}
      />
      {uploads.items.length > 0 && (
        <ul className="space-y-2" aria-label="Uploads">
          {uploads.items.map((u) => (
            <li key={u.key} className="rounded-lg border bg-card px-3 py-2 text-sm">
              <div className="flex items-center gap-2">
                {u.error ? (
                  <AlertCircle className="size-4 text-destructive" />
                ) : u.file && hasProblem(u.file) ? (
                  <AlertTriangle className="size-4 text-amber-600" />
                ) : u.done ? (
                  <CheckCircle2 className="size-4 text-emerald-600" />
                ) : (
                  <Loader2 className="size-4 animate-spin text-muted-foreground" />
                )}
                <span className="min-w-0 flex-1 truncate">{u.name}</span>
                <span className="text-xs text-muted-foreground">{u.error ? 'failed' : `${Math.round(u.progress * 100)}%`}</span>
                {u.error && (
                  <Button variant="ghost" size="icon-sm" aria-label={`Dismiss ${u.name}`} onClick={() => uploads.dismiss(u.key)}>
                    <X />
                  </Button>
                )}
              </div>
              {u.error ? (
                <p role="alert" className="mt-1 text-xs text-destructive">
                  {u.error}
                </p>
              ) : u.file && hasProblem(u.file) ? (
                <p className="mt-1 text-xs text-amber-700 dark:text-amber-400">Uploaded, but: {u.file.problem}</p>
              ) : (
                <div className="mt-2 h-1 overflow-hidden rounded-full bg-muted" role="progressbar" aria-valuenow={Math.round(u.progress * 100)} aria-valuemin={0} aria-valuemax={100} aria-label={`Uploading ${u.name}`}>
                  <div className="h-full bg-primary transition-all" style={{ width: `${u.progress * 100}%` }} />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {files.data?.items.length === 0 && uploads.items.length === 0 && (
        <p className="text-sm text-muted-foreground">No datasets yet.</p>
      )}
      <ul className="space-y-2">
        {files.data?.items.map((f) => (
          <li key={f.id} className="overflow-hidden rounded-lg border bg-card" data-testid="file-row" data-file={f.name}>
            <div className="flex items-center gap-3 px-3 py-2">
              <button
                type="button"
                className="flex min-w-0 flex-1 cursor-pointer items-center gap-3 text-left"
                onClick={() => setOpenId(openId === f.id ? null : f.id)}
                aria-expanded={openId === f.id}
              >
                {f.check === 'not_tabular' ? (
                  <FileText className="size-5 shrink-0 text-muted-foreground" />
                ) : (
                  <FileSpreadsheet className="size-5 shrink-0 text-primary" />
                )}
                <span className="min-w-0">
                  <span className="flex min-w-0 items-center gap-2">
                    <span className="truncate text-sm font-medium">{f.name}</span>
                    <FileCheckBadge file={f} />
                  </span>
                  <span className="block text-xs text-muted-foreground" data-testid="file-meta">
                    <span className="font-medium text-foreground/80" data-testid="file-version">
                      v{f.version}
                    </span>{' '}
                    · {formatBytes(f.size)} · {formatDate(f.updated_at)}
                    {f.table && <span data-testid="file-table"> · {describeTable(f.table)}</span>}
                  </span>
                </span>
              </button>
              {f.version > 1 && (
                <Button
                  variant="ghost"
                  size="icon-sm"
                  aria-label={`Versions of ${f.name}`}
                  aria-expanded={versionsId === f.id}
                  title="Earlier versions"
                  onClick={() => setVersionsId(versionsId === f.id ? null : f.id)}
                >
                  <History />
                </Button>
              )}
              <Button variant="ghost" size="icon-sm" aria-label={`Download ${f.name}`} onClick={() => void downloadUrl(`/api/v1/files/${f.id}/content`, f.name)}>
                <Download />
              </Button>
              <GuardedButton
                variant="ghost"
                size="icon-sm"
                aria-label={`Delete ${f.name}`}
                blockedBecause={blockedFor(role, 'editor', 'delete files')}
                onClick={() => setToDelete(f)}
              >
                <Trash2 />
              </GuardedButton>
            </div>
            {versionsId === f.id && <Versions file={f} />}
            {openId === f.id && <FileDetails file={f} />}
          </li>
        ))}
      </ul>
      {replace.dialog}
      <ConfirmDialog
        open={!!toDelete}
        onOpenChange={(o) => !o && setToDelete(null)}
        title="Delete dataset?"
        description={`“${toDelete?.name}” will be removed from this project.`}
        pending={del.isPending}
        onConfirm={() => toDelete && del.mutate(toDelete.id)}
      />
    </section>
  );
}

/** A table's size in a few words: "600 rows · 4 columns · 2 sheets". */
export function describeTable(table: NonNullable<FileOut['table']>): string {
  const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;
  const parts = [plural(table.rows, 'row'), plural(table.columns, 'column')];
  if (table.sheets) parts.push(plural(table.sheets.length, 'sheet'));
  return parts.join(' · ');
}
