import { Loader2 } from 'lucide-react';
import { useId, useState, type ReactNode } from 'react';
import type { SourceOut, SourceUpdate } from '@/client';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label, Textarea } from '@/components/ui/input';
import { Tabs } from '@/components/ui/tabs';
import { useBlocked } from '@/features/projects/role';
import { useCreateSource, useUpdateSource } from './mutations';
import {
  editableUrl,
  emptyFields,
  kindOf,
  fieldsProblem,
  isFileKind,
  KINDS,
  nameProblem,
  splitPassword,
  urlFromFields,
  type SourceFields,
  type SourceKind,
} from './source-url';

type Mode = 'url' | 'fields';

const MOVED = 'The password was taken out of the URL into its own field: it is sent apart and never shown.';

function Field({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ReactNode }) {
  return (
    <div className="grid min-w-0 gap-1.5">
      <Label htmlFor={id}>{label}</Label>
      {children}
      {hint && (
        <p id={`${id}-hint`} className="text-xs text-muted-foreground">
          {hint}
        </p>
      )}
    </div>
  );
}

/** A URL and the password kept out of it: one typed or pasted into the URL moves to its own field when the URL is left. */
function useUrlAndPassword(initial: string) {
  const [url, setUrl] = useState(initial);
  const [password, setPassword] = useState('');
  const [moved, setMoved] = useState(false);
  const moveOut = () => {
    const split = splitPassword(url);
    if (split.password === null) return;
    setUrl(split.url);
    setPassword(split.password);
    setMoved(true);
  };
  return { url, setUrl, password, setPassword, moved, moveOut };
}

type Credentials = ReturnType<typeof useUrlAndPassword>;

function UrlField({ id, hint, credentials, blocked }: { id: string; hint: string; credentials: Credentials; blocked?: string | null }) {
  return (
    <Field id={id} label="URL" hint={blocked ?? hint}>
      <Input
        id={id}
        disabled={!!blocked}
        title={blocked ?? undefined}
        className="font-mono text-[13px]"
        placeholder="postgresql://user@host:5432/database"
        autoComplete="off"
        spellCheck={false}
        autoCapitalize="off"
        value={credentials.url}
        onChange={(e) => credentials.setUrl(e.target.value)}
        onBlur={credentials.moveOut}
        aria-describedby={`${id}-hint`}
      />
    </Field>
  );
}

function PasswordField({ id, credentials, hint, blocked }: { id: string; credentials: Credentials; hint: string; blocked?: string | null }) {
  return (
    <Field id={id} label="Password" hint={credentials.moved ? MOVED : hint}>
      <Input
        id={id}
        disabled={!!blocked}
        title={blocked ?? undefined}
        type="password"
        autoComplete="new-password"
        value={credentials.password}
        onChange={(e) => credentials.setPassword(e.target.value)}
        aria-describedby={`${id}-hint`}
      />
    </Field>
  );
}

/** The description, the form's problem and its buttons: the end of both forms. */
function FormEnd({
  id,
  description,
  onDescription,
  problem,
  onClose,
  pending,
  submit,
}: {
  id: string;
  description: string;
  onDescription: (d: string) => void;
  problem: string | null;
  onClose: () => void;
  pending: boolean;
  submit: string;
}) {
  return (
    <>
      <Field id={`${id}-description`} label="Description">
        <Textarea
          id={`${id}-description`}
          rows={2}
          placeholder="What is in it, for the team and the agent (optional)"
          value={description}
          onChange={(e) => onDescription(e.target.value)}
        />
      </Field>
      <FormError>{problem}</FormError>
      <DialogFooter>
        <Button type="button" variant="outline" onClick={onClose}>
          Cancel
        </Button>
        <Button type="submit" disabled={pending}>
          {pending && <Loader2 className="animate-spin" />}
          {submit}
        </Button>
      </DialogFooter>
    </>
  );
}

/** How to connect, as fields: the kind, then a server's host, port, database and user, or a file's path. */
function ConnectionFields({ id, fields, onChange }: { id: string; fields: SourceFields; onChange: (f: SourceFields) => void }) {
  const set = (patch: Partial<SourceFields>) => onChange({ ...fields, ...patch });
  const port = KINDS.find((k) => k.value === fields.kind)?.port;
  return (
    <div className="grid gap-3">
      <Field id={`${id}-kind`} label="Kind">
        <select
          id={`${id}-kind`}
          className="h-9 w-full rounded-md border bg-card px-2 text-sm shadow-xs outline-none focus-visible:border-primary focus-visible:ring-2 focus-visible:ring-primary/20"
          value={fields.kind}
          onChange={(e) => set({ kind: e.target.value as SourceKind })}
        >
          {KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
      </Field>
      {isFileKind(fields.kind) ? (
        <Field id={`${id}-path`} label="Path on the server" hint="The file must lie in a folder the server's operator allows (SOURCES_FILE_DIRS).">
          <Input
            id={`${id}-path`}
            className="font-mono text-[13px]"
            placeholder={fields.kind === 'sqlite' ? '/srv/data/shop.db' : '/srv/data/shop.duckdb'}
            value={fields.path}
            onChange={(e) => set({ path: e.target.value })}
            aria-describedby={`${id}-path-hint`}
          />
        </Field>
      ) : (
        <>
          <div className="grid grid-cols-[1fr_6rem] gap-3">
            <Field id={`${id}-host`} label="Host">
              <Input id={`${id}-host`} placeholder="db.internal" autoCapitalize="off" spellCheck={false} value={fields.host} onChange={(e) => set({ host: e.target.value })} />
            </Field>
            <Field id={`${id}-port`} label="Port">
              <Input id={`${id}-port`} inputMode="numeric" placeholder={String(port ?? '')} value={fields.port} onChange={(e) => set({ port: e.target.value })} />
            </Field>
          </div>
          <div className="grid gap-3 sm:grid-cols-2">
            <Field id={`${id}-database`} label="Database">
              <Input id={`${id}-database`} autoCapitalize="off" spellCheck={false} value={fields.database} onChange={(e) => set({ database: e.target.value })} />
            </Field>
            <Field id={`${id}-user`} label="User">
              <Input id={`${id}-user`} autoComplete="off" autoCapitalize="off" spellCheck={false} value={fields.user} onChange={(e) => set({ user: e.target.value })} />
            </Field>
          </div>
        </>
      )}
    </div>
  );
}

/** The form to add a source: its name, how to connect (a URL or fields), a password kept apart, a description. */
function AddSourceForm({ projectId, onClose, onAdded }: { projectId: string; onClose: () => void; onAdded: (source: SourceOut) => void }) {
  const id = useId();
  const create = useCreateSource(projectId);
  const [name, setName] = useState('');
  const [mode, setMode] = useState<Mode>('url');
  const credentials = useUrlAndPassword('');
  const [fields, setFields] = useState<SourceFields>(emptyFields);
  const [description, setDescription] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const typedUrl = mode === 'url' ? credentials.url : urlFromFields(fields);
  // A file on the server has no password to send.
  const file = isFileKind(kindOf(typedUrl));

  const submit = () => {
    const typed = splitPassword(typedUrl);
    const missing = nameProblem(name.trim()) ?? (mode === 'url' ? (typed.url ? null : 'Give the URL of the database.') : fieldsProblem(fields));
    setProblem(missing);
    if (missing) return;
    const secret = typed.password ?? (file ? '' : credentials.password);
    create.mutate(
      { name: name.trim(), url: typed.url, description: description.trim(), ...(secret ? { password: secret } : {}) },
      { onSuccess: onAdded },
    );
  };

  return (
    <form
      className="grid gap-4"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Field id={`${id}-name`} label="Name" hint='What the agent calls it in its code: sql("…", source="name").'>
        <Input
          id={`${id}-name`}
          placeholder="e.g. shop"
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-describedby={`${id}-name-hint`}
          autoFocus
        />
      </Field>
      <div className="grid gap-3">
        <Tabs
          label="Connect with"
          items={[
            { value: 'url', text: 'URL' },
            { value: 'fields', text: 'Fields' },
          ]}
          current={mode}
          onSelect={setMode}
        />
        {mode === 'url' ? (
          <UrlField id={`${id}-url`} credentials={credentials} hint="postgresql://, mysql://, or sqlite:////path and duckdb:////path for a file on the server." />
        ) : (
          <ConnectionFields id={id} fields={fields} onChange={setFields} />
        )}
        {!file && <PasswordField id={`${id}-password`} credentials={credentials} hint="Stored encrypted; never shown again, nor given to the agent." />}
      </div>
      <FormEnd
        id={id}
        description={description}
        onDescription={setDescription}
        problem={problem ?? create.error?.message ?? null}
        onClose={onClose}
        pending={create.isPending}
        submit={create.isPending ? 'Connecting…' : 'Add and check'}
      />
    </form>
  );
}

/** What changed in the edit form, as the PATCH body: only the fields the user changed. */
export function sourceChanges(
  source: Pick<SourceOut, 'name' | 'description' | 'display_url'>,
  edit: { name: string; description: string; url: string; password: string },
): SourceUpdate {
  const body: SourceUpdate = {};
  const typed = splitPassword(edit.url);
  if (edit.name.trim() !== source.name) body.name = edit.name.trim();
  if (edit.description.trim() !== source.description) body.description = edit.description.trim();
  if (typed.url !== editableUrl(source.display_url)) body.url = typed.url;
  const password = typed.password ?? edit.password;
  if (password) body.password = password;
  return body;
}

/** The form to change a source: its name, description, URL, or password (left empty, the stored one is kept). */
function EditSourceForm({ source, onClose, onSaved }: { source: SourceOut; onClose: () => void; onSaved: (source: SourceOut, checked: boolean) => void }) {
  const id = useId();
  const update = useUpdateSource(source.project_id);
  const [name, setName] = useState(source.name);
  const credentials = useUrlAndPassword(editableUrl(source.display_url));
  const [description, setDescription] = useState(source.description);
  const [problem, setProblem] = useState<string | null>(null);
  const { url, password } = credentials;
  const file = isFileKind(kindOf(url));
  // An editor renames and describes a source; its credentials are the owners'.
  const credentialsBlocked = useBlocked('owner', "change a source's URL or password");

  return (
    <form
      className="grid gap-4"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const missing = nameProblem(name.trim()) ?? (url.trim() ? null : 'Give the URL of the database.');
        setProblem(missing);
        if (missing) return;
        const body = sourceChanges(source, { name, description, url, password: file ? '' : password });
        if (Object.keys(body).length === 0) return onClose();
        update.mutate({ id: source.id, body }, { onSuccess: (saved) => onSaved(saved, body.url !== undefined || body.password !== undefined) });
      }}
    >
      <Field id={`${id}-name`} label="Name" hint="Code that names the old one stops finding it.">
        <Input id={`${id}-name`} autoComplete="off" spellCheck={false} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={`${id}-name-hint`} />
      </Field>
      <UrlField id={`${id}-url`} credentials={credentials} hint="A new URL or password is checked again." blocked={credentialsBlocked} />
      {!file && (
        <PasswordField id={`${id}-password`} credentials={credentials} hint="Leave empty to keep the stored password: only while the server, port, user, database and kind stay the same (another target needs the password again)." blocked={credentialsBlocked} />
      )}
      <FormEnd
        id={id}
        description={description}
        onDescription={setDescription}
        problem={problem ?? update.error?.message ?? null}
        onClose={onClose}
        pending={update.isPending}
        submit="Save"
      />
    </form>
  );
}

const DIALOG = 'max-h-[calc(100dvh-2rem)] max-w-lg overflow-y-auto';

/**
 * Adding a source. The form lives only while the dialog is open, so what was typed (the password
 * above all) is gone once it closes.
 */
export function AddSourceDialog({
  projectId,
  open,
  onOpenChange,
  onAdded,
}: {
  projectId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onAdded: (source: SourceOut) => void;
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className={DIALOG}>
        <DialogTitle>Add a data source</DialogTitle>
        <DialogDescription>
          The workbench connects with these credentials and runs the agent's queries, read-only; the agent's code sees only the results.
        </DialogDescription>
        <AddSourceForm projectId={projectId} onClose={() => onOpenChange(false)} onAdded={onAdded} />
      </DialogContent>
    </Dialog>
  );
}

export function EditSourceDialog({
  source,
  onOpenChange,
  onSaved,
}: {
  source: SourceOut | null;
  onOpenChange: (o: boolean) => void;
  onSaved: (source: SourceOut, checked: boolean) => void;
}) {
  return (
    <Dialog open={!!source} onOpenChange={onOpenChange}>
      <DialogContent className={DIALOG} aria-describedby={undefined}>
        <DialogTitle>Edit {source?.name}</DialogTitle>
        {source && <EditSourceForm key={source.id} source={source} onClose={() => onOpenChange(false)} onSaved={onSaved} />}
      </DialogContent>
    </Dialog>
  );
}
