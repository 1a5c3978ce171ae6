import type { FastifyPluginAsync } from 'fastify';
import { BOARD_CARDS, type BoardCard, readBoard } from '../../../../capture/board.ts';
import type { Deps } from '../../../../deps.ts';
import { countInWords } from '../../../../domain/inbox.ts';
import { CRM_STATUSES, type CrmStatus } from '../../../../domain/values.ts';
import { type PageUser, requireUser, scopeOf } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CsrfField, Time, words } from '../kit/ui.ts';
import { Score, whoOf } from './lead-parts.ts';
import { DONE } from './list.ts';

/**
 * GET /app/calls/board: the pipeline board, one column per CRM status (new → to call → contacted →
 * qualified) with its count and newest cards. A card moves with its buttons (POST forms to
 * /app/calls/bulk, back here with the card's anchor), and with the arrow keys on a focused card
 * (assets/board.js presses the button): no dragging needed. With a mouse, a card can also be dragged
 * to another column (HTML5 drag and drop, added by assets/board.js: the drop posts the same form to
 * /app/calls/bulk, with the column's status, `data-status`); without JavaScript the buttons remain.
 */
function MoveButton(p: { user: PageUser; card: BoardCard; to: CrmStatus; dir: 'prev' | 'next' }): VNode {
  const who = whoOf(p.card);
  return html`<form method="post" action="/app/calls/bulk" class="inline">
    <${CsrfField} user=${p.user} />
    <input type="hidden" name="ids" value=${p.card.id} />
    <input type="hidden" name="crm_status" value=${p.to} />
    <input type="hidden" name="back" value=${`/app/calls/board#card-${p.card.id}`} />
    <button type="submit" data-move=${p.dir} aria-keyshortcuts=${p.dir === 'prev' ? 'ArrowLeft' : 'ArrowRight'}>
      ${p.dir === 'prev' ? '← ' : ''}${words(p.to)}${p.dir === 'next' ? ' →' : ''}<span class="sr-only">: move ${who}</span>
    </button>
  </form>`;
}

function Card({ card, user }: { card: BoardCard; user: PageUser }): VNode {
  const i = CRM_STATUSES.indexOf(card.crm_status);
  const prev = CRM_STATUSES[i - 1];
  const next = CRM_STATUSES[i + 1];
  return html`<li class="card" id=${`card-${card.id}`} tabindex="-1" data-card>
    <a href=${`/app/calls/${card.id}`} class="who">${whoOf(card)}</a>
    <span class="muted">${card.subject ?? '—'}</span>
    <span><${Score} score=${card.lead_score} /> · <span class="muted"><${Time} at=${card.created_at} /></span></span>
    <span class="moves">
      ${prev ? html`<${MoveButton} user=${user} card=${card} to=${prev} dir="prev" />` : null}
      ${next ? html`<${MoveButton} user=${user} card=${card} to=${next} dir="next" />` : null}
    </span>
  </li>`;
}

export function callBoardPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/calls/board', async (req, reply) => {
      const user = requireUser(req);
      const columns = await readBoard(deps.db, scopeOf(user));
      return renderPage(reply, {
        title: 'Pipeline',
        user,
        nav: 'calls',
        notice: doneNotice(req, DONE),
        body: html`<p class="new-call"><a href="/app/calls">Inbox</a></p>
          <p class="muted keys">On a card: <kbd>←</kbd> and <kbd>→</kbd> move it to the previous or next column; with a mouse, drag it to any column.</p>
          <div class="board">
            ${columns.map(
              (
                col,
              ) => html`<section class="column" aria-labelledby=${`col-${col.status}`} data-status=${col.status}>
                <h2 id=${`col-${col.status}`}>${words(col.status)} <span class="count">${countInWords(col.count)}</span></h2>
                ${
                  col.cards.length === 0
                    ? html`<p class="muted">No calls.</p>`
                    : html`<ol class="cards">${col.cards.map((c) => html`<${Card} card=${c} user=${user} />`)}</ol>`
                }
                ${
                  col.count > BOARD_CARDS
                    ? html`<p><a href=${`/app/calls?status=${col.status}`}>All ${countInWords(col.count)} in the inbox</a></p>`
                    : null
                }
              </section>`,
            )}
          </div>`,
      });
    });
  };
}
