import { useQuery } from '@tanstack/react-query';
import { ImageOff } from 'lucide-react';
import type * as React from 'react';
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { downloadUrl } from '@/lib/api';
import { useObjectUrl } from '@/lib/object-url';
import { cn } from '@/lib/utils';
import { artifactContentPath, hostOf, isExternalHref } from '@/lib/safe-url';
import { artifactBlobQuery } from './queries';

/** An image from one of this session's artifacts, fetched with the Bearer token like the others. */
function ArtifactImage({ path, alt }: { path: string; alt: string }) {
  const q = useQuery(artifactBlobQuery(path));
  const src = useObjectUrl(q.data);
  if (!src) return <span className="text-muted-foreground">[{alt || 'image'}]</span>;
  return <img src={src} alt={alt} className="my-2 max-h-96 rounded" />;
}

/**
 * Markdown images load only from the app's own artifacts: any other URL would be fetched by the
 * browser the moment the answer shows, carrying whatever the model put in it to someone else.
 */
function AnswerImage({ src, alt }: React.ComponentProps<'img'>) {
  const text = alt ?? '';
  const path = artifactContentPath(typeof src === 'string' ? src : null);
  if (path) return <ArtifactImage path={path} alt={text} />;
  const where = typeof src === 'string' && src ? hostOf(src) : '';
  return (
    <span
      className="inline-flex items-center gap-1 rounded border border-dashed px-1.5 py-0.5 text-xs text-muted-foreground"
      title={typeof src === 'string' ? src : undefined}
      data-testid="blocked-image"
    >
      <ImageOff className="size-3.5" />
      [external image blocked{text ? `: ${text}` : ''}
      {where ? ` from ${where}` : ''}]
    </span>
  );
}

/** Links to artifacts download with the Bearer token; other links open elsewhere, with no referrer. */
function AnswerLink({ href, children }: React.ComponentProps<'a'>) {
  const path = artifactContentPath(href);
  if (path) {
    const name = typeof children === 'string' ? children : 'download';
    return (
      <a
        href={path}
        onClick={(e) => {
          e.preventDefault();
          void downloadUrl(path, name);
        }}
      >
        {children}
      </a>
    );
  }
  if (!href) return <span>{children}</span>;
  if (isExternalHref(href)) {
    return (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow">
        {children}
      </a>
    );
  }
  return <a href={href}>{children}</a>;
}

const components: Components = { img: AnswerImage, a: AnswerLink };

/**
 * Markdown the model wrote (answers, plans): images only from this session's artifacts, artifact
 * links downloaded with the token, outside links opened elsewhere without a referrer.
 */
export function ModelMarkdown({ text, className, ...props }: { text: string } & Omit<React.ComponentProps<'div'>, 'children'>) {
  return (
    <div className={cn('prose-answer', className)} {...props}>
      <Markdown remarkPlugins={[remarkGfm]} components={components}>
        {text}
      </Markdown>
    </div>
  );
}

export function Answer({ text }: { text: string }) {
  return <ModelMarkdown text={text} className="text-[15px]" data-testid="final-answer" />;
}
