import { AppError } from '../../../../errors.ts';
import { html, type VNode } from './html.ts';
import type { Notice } from './layout.ts';

/**
 * A refused form's error marked on its field: the input gets aria-invalid, its message linked by
 * aria-describedby, and the focus (autofocus); the page's notice repeats the message as an alert.
 */
export interface FieldError {
  field: string;
  text: string;
}

/** Attributes to spread on the input named `name` (…${fieldAttrs('email', err)}), hint ids kept. */
export const fieldAttrs = (name: string, err: FieldError | null | undefined, hint?: string) =>
  err?.field === name
    ? {
        'aria-invalid': 'true',
        'aria-describedby': [`${name}-error`, hint].filter(Boolean).join(' '),
        autofocus: true,
      }
    : hint
      ? { 'aria-describedby': hint }
      : {};

/** The message under the field it is about (nothing for the other fields). */
export const ErrorText = ({
  name,
  err,
}: {
  name: string;
  err: FieldError | null | undefined;
}): VNode | null =>
  err?.field === name ? html`<p class="field-error" id=${`${name}-error`}>${err.text}</p>` : null;

/**
 * An AppError a form caused: its status, the notice, and the field it names (error.param, mapped
 * through `fieldOf` when the service's name differs from the input's); anything else is rethrown.
 */
export function fieldError(
  err: unknown,
  fieldOf: Readonly<Record<string, string>> = {},
): { status: number; notice: Notice; err: FieldError | null } {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  const name = err.param === undefined ? undefined : (fieldOf[err.param] ?? err.param);
  return {
    status: err.status,
    notice: { kind: 'error', text: err.message },
    err: name === undefined ? null : { field: name, text: err.message },
  };
}
