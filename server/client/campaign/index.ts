/**
 * Campaigns in the browser. On the campaign page: show only the selected optimizer's options (the others'
 * fieldsets are disabled, so their fields are not sent), enable the bound or choice inputs that fit each
 * parameter's type, and switch workflow on select (form.ts). On the execution page: the campaign panel, drawn
 * from `latest_plot` (uPlot, the vendor IIFE the panel loads: a global) and fetched again on each iteration of
 * the campaign's run (SSE; panel.ts, the two-parameter model in heatmap.ts). Does nothing on other pages.
 */
import { initCampaignForm } from './form.js';
import { initCampaignPanel } from './panel.js';

// starts itself: server/client/app.ts only imports this module (DOMContentLoaded: after the deferred uPlot)
if (typeof document !== 'undefined') {
  document.addEventListener('DOMContentLoaded', () => {
    initCampaignForm();
    initCampaignPanel();
  });
}
