/**
 * The template tag of every page: htm bound to preact's h (docs/decisions.md "The web app:
 * server-rendered preact + htm"). Interpolated values are text or attribute values, escaped by the
 * renderer; nothing here ever writes raw HTML (no dangerouslySetInnerHTML).
 */
export { html } from 'htm/preact';
export type { ComponentChildren, VNode } from 'preact';
