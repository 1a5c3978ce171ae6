import { emptyAnalysis, type FollowupDraft, type ProcessedAnalysis } from '../domain/analysis.ts';

/**
 * The dozen calls of the first-run demo organization (a plumbing company in San Francisco). They
 * cover every recording state (available, pending, refused inbound, not_captured outbound,
 * deleted), one call in the trash and one scheduled for deletion, both directions, every
 * crm_status and review_status, and phone numbers spelled the many ways carriers and people
 * write them (normalized by the seed like any stored call).
 */
export type DemoRecording = 'available' | 'pending' | 'refused' | 'not_captured' | 'deleted';

export interface DemoCall {
  direction: 'inbound' | 'outbound';
  /** the customer's number as reported (inbound caller id / dialled number) */
  phone: string;
  callerName: string | null;
  hoursAgo: number;
  crmStatus: 'new' | 'to_call' | 'contacted' | 'qualified';
  reviewStatus: 'new' | 'needs_decision' | 'needs_review' | 'handled' | 'no_action' | null;
  outboundLifecycle?: 'completed' | 'customer_no_answer';
  recording: DemoRecording;
  /** audio length in seconds (available, or deleted: measured before deletion) */
  seconds?: number;
  trashedHoursAgo?: number;
  /** scheduled for deletion: when it was scheduled, and when the deletion will run */
  deletion?: {
    scheduledHoursAgo: number;
    inHours: number;
    reason: 'consent_withdrawn' | 'consent_not_asked';
  };
  recordingDeletedHoursAgo?: number;
  transcript?: string;
  analysis?: Partial<ProcessedAnalysis>;
  followup?: FollowupDraft;
}

export const DEMO_COMPANY = { name: 'Demo Plumbing Co.', country: 'US', phone: '(415) 555-0100' } as const;

/** Every analysis field present (null when the call did not contain it), as the pipeline writes them. */
export function fullAnalysis(a: Partial<ProcessedAnalysis>): ProcessedAnalysis {
  return { ...emptyAnalysis(), ...a };
}

export const DEMO_CALLS: DemoCall[] = [
  {
    direction: 'inbound',
    phone: '(415) 555-0132',
    callerName: 'Sarah Johnson',
    hoursAgo: 2,
    crmStatus: 'new',
    reviewStatus: 'new',
    recording: 'available',
    seconds: 74,
    transcript:
      "Agent: Demo Plumbing, this is Mike. Caller: Hi, this is Sarah Johnson. My water heater is leaking all over the garage floor. Agent: Sorry to hear that. Is it a tank unit? Caller: Yes, a 50-gallon gas tank, about twelve years old. I'm at 1450 Noe Street. Could someone come tomorrow morning? Agent: We can be there between 8 and 10. Caller: Perfect, thank you.",
    analysis: {
      caller_name: 'Sarah Johnson',
      summary:
        'Sarah Johnson reports a leaking 12-year-old 50-gallon gas water heater in her garage and booked a visit for tomorrow between 8 and 10 am.',
      subject: 'Leaking gas water heater – visit tomorrow 8–10 am',
      service_needed: 'Water heater repair or replacement',
      services_match: true,
      lead_score: 9,
      preferred_date: 'tomorrow 8–10 am',
      client_city: 'San Francisco',
      client_address: '1450 Noe Street',
      additional_details: '50-gallon gas tank unit, about 12 years old; water on the garage floor.',
      client_country: 'US',
      detected_language: 'en',
      proposal_items: [
        { kind: 'follow_up', text: 'Bring a replacement quote for a 50-gallon gas water heater.' },
        { kind: 'decision', text: 'Confirm the 8–10 am slot by text the evening before.' },
      ],
    },
    followup: {
      subject: 'Your water heater visit tomorrow, 8–10 am',
      body: 'Hi Sarah,\n\nthanks for calling Demo Plumbing. Our technician will be at 1450 Noe Street tomorrow between 8 and 10 am to look at your leaking water heater. Until then, you can close the cold-water valve on top of the tank to slow the leak.\n\nSee you tomorrow,',
      language: 'en',
    },
  },
  {
    direction: 'inbound',
    phone: '415.555.0178',
    callerName: 'Marcus Lee',
    hoursAgo: 0.25,
    crmStatus: 'new',
    reviewStatus: null,
    recording: 'pending',
  },
  {
    direction: 'outbound',
    phone: '+1 512-555-0143',
    callerName: null,
    hoursAgo: 26,
    crmStatus: 'contacted',
    reviewStatus: 'handled',
    outboundLifecycle: 'completed',
    recording: 'available',
    seconds: 118,
    transcript:
      "Agent: Hi, this is Mike from Demo Plumbing, calling about the quote for your bathroom remodel. Customer: Oh hi, Priya here. Yes, we looked at it. Can you start the week of the 20th? Agent: We can. I'll send the contract today. Customer: Great, and please include the shower valve upgrade.",
    analysis: {
      caller_name: null,
      counterparty_name: 'Priya Patel',
      summary:
        'Follow-up call on the bathroom remodel quote: Priya Patel accepts, wants to start the week of the 20th and adds the shower valve upgrade.',
      subject: 'Bathroom remodel quote accepted – start week of the 20th',
      service_needed: 'Bathroom remodel plumbing',
      services_match: true,
      lead_score: 10,
      preferred_date: 'week of the 20th',
      client_city: 'Austin',
      detected_language: 'en',
      proposal_items: [
        { kind: 'follow_up', text: 'Send the contract including the shower valve upgrade today.' },
      ],
    },
    followup: {
      subject: 'Your bathroom remodel contract',
      body: 'Hi Priya,\n\nthank you for accepting our quote. As discussed, the attached contract includes the shower valve upgrade, and we have reserved the week of the 20th for the work.\n\nBest regards,',
      language: 'en',
    },
  },
  {
    direction: 'outbound',
    phone: '1-646-555-0199',
    callerName: null,
    hoursAgo: 49,
    crmStatus: 'to_call',
    reviewStatus: null,
    outboundLifecycle: 'customer_no_answer',
    recording: 'not_captured',
  },
  {
    direction: 'inbound',
    phone: '2125550147',
    callerName: 'Tom Becker',
    hoursAgo: 75,
    crmStatus: 'to_call',
    reviewStatus: 'needs_decision',
    recording: 'refused',
  },
  {
    direction: 'inbound',
    phone: '+1 (303) 555 0126',
    callerName: 'Linda Alvarez',
    hoursAgo: 98,
    crmStatus: 'qualified',
    reviewStatus: 'needs_review',
    recording: 'available',
    seconds: 52,
    transcript:
      'Agente: Demo Plumbing, buenos días. Cliente: Hola, soy Linda Alvarez. El desagüe de la cocina está completamente atascado. Agente: ¿Le viene bien el jueves por la tarde? Cliente: Sí, el jueves después de las tres.',
    analysis: {
      caller_name: 'Linda Alvarez',
      summary:
        'Linda Alvarez tiene el desagüe de la cocina completamente atascado y prefiere una visita el jueves por la tarde.',
      subject: 'Desagüe de cocina atascado – jueves por la tarde',
      service_needed: 'Desatasco de desagüe de cocina',
      services_match: true,
      lead_score: 7,
      preferred_date: 'jueves después de las 15:00',
      client_city: 'Denver',
      detected_language: 'es',
    },
    followup: {
      subject: 'Su visita del jueves',
      body: 'Hola Linda:\n\ngracias por llamar a Demo Plumbing. Le confirmamos la visita del jueves después de las 15:00 para desatascar el desagüe de la cocina.\n\nSaludos cordiales,',
      language: 'es',
    },
  },
  {
    direction: 'inbound',
    phone: '(617) 555-0112',
    callerName: "Kevin O'Brien",
    hoursAgo: 122,
    crmStatus: 'new',
    reviewStatus: 'no_action',
    recording: 'available',
    seconds: 33,
    transcript:
      "Voicemail: Hi, it's Kevin O'Brien. Just calling to say the faucet you fixed last week works great. No need to call back. Thanks!",
    analysis: {
      caller_name: "Kevin O'Brien",
      summary:
        'Voicemail from Kevin O’Brien thanking the team for last week’s faucet repair; no call-back needed.',
      subject: 'Thank-you voicemail for the faucet repair',
      services_match: null,
      lead_score: 1,
      detected_language: 'en',
    },
  },
  {
    direction: 'outbound',
    phone: '+1 415 555 0165',
    callerName: null,
    hoursAgo: 146,
    crmStatus: 'qualified',
    reviewStatus: 'needs_decision',
    outboundLifecycle: 'completed',
    recording: 'available',
    seconds: 95,
    transcript:
      'Agent: Hello, Demo Plumbing calling back about the sewer line inspection. Customer: Yes, this is Greg at Sunset Bistro. The camera found roots? Agent: Right, at about forty feet. We can hydro-jet or replace that section. Customer: Send me both prices, I need to decide with my partner.',
    analysis: {
      counterparty_name: 'Greg Howard',
      summary:
        'Call-back to Sunset Bistro about the sewer camera inspection: roots at about 40 feet; the customer wants prices for hydro-jetting and for replacing the section.',
      subject: 'Sunset Bistro sewer line – prices for jetting vs. replacement',
      service_needed: 'Sewer line repair',
      services_match: true,
      lead_score: 8,
      client_city: 'San Francisco',
      additional_details: 'Commercial customer (restaurant); decision taken with a partner.',
      detected_language: 'en',
      proposal_items: [
        { kind: 'follow_up', text: 'Send two prices: hydro-jetting and replacing the damaged section.' },
        { kind: 'decision', text: 'Customer decides with his partner.' },
      ],
    },
    followup: {
      subject: 'Sewer line options and prices',
      body: 'Hi Greg,\n\nas promised, here are our two options for the roots found at about 40 feet: hydro-jetting the line, or replacing the damaged section. Both prices are below; let us know which one you choose.\n\nBest regards,',
      language: 'en',
    },
  },
  {
    direction: 'inbound',
    phone: '773-555-0183',
    callerName: 'Jessica Wu',
    hoursAgo: 194,
    crmStatus: 'new',
    reviewStatus: 'no_action',
    recording: 'available',
    seconds: 41,
    trashedHoursAgo: 20,
    transcript:
      'Caller: Hi, is this Golden Gate Pizza? Agent: No, this is Demo Plumbing. Caller: Oh, sorry, wrong number.',
    analysis: {
      caller_name: 'Jessica Wu',
      summary: 'Wrong number: the caller was trying to reach a pizza restaurant.',
      subject: 'Wrong number',
      services_match: false,
      lead_score: 1,
      detected_language: 'en',
    },
  },
  {
    direction: 'inbound',
    phone: '(206) 555-0154',
    callerName: 'Daniel Kim',
    hoursAgo: 242,
    crmStatus: 'contacted',
    reviewStatus: 'handled',
    recording: 'available',
    seconds: 66,
    deletion: { scheduledHoursAgo: 40, inHours: 5 * 24, reason: 'consent_withdrawn' },
    transcript:
      'Caller: Hi, Daniel Kim. My toilet keeps running all night. Agent: Probably the flapper. We can replace it Friday. Caller: Friday works.',
    analysis: {
      caller_name: 'Daniel Kim',
      summary:
        'Daniel Kim has a toilet that keeps running; likely a worn flapper, replacement booked for Friday.',
      subject: 'Running toilet – flapper replacement Friday',
      service_needed: 'Toilet repair',
      services_match: true,
      lead_score: 6,
      preferred_date: 'Friday',
      client_city: 'Seattle',
      detected_language: 'en',
    },
  },
  {
    direction: 'inbound',
    phone: '+1.702.555.0137',
    callerName: 'Robert Garcia',
    hoursAgo: 310,
    crmStatus: 'contacted',
    reviewStatus: 'handled',
    recording: 'deleted',
    seconds: 88,
    recordingDeletedHoursAgo: 24,
    transcript:
      'Caller: Robert Garcia here, we have low water pressure in the whole house. Agent: Could be the pressure regulator. We can check it Monday.',
    analysis: {
      caller_name: 'Robert Garcia',
      summary: 'Low water pressure in the whole house; the pressure regulator will be checked on Monday.',
      subject: 'Low water pressure – regulator check Monday',
      service_needed: 'Water pressure diagnosis',
      services_match: true,
      lead_score: 5,
      preferred_date: 'Monday',
      client_city: 'Las Vegas',
      detected_language: 'en',
    },
  },
  {
    direction: 'outbound',
    phone: '(512) 555-0190',
    callerName: null,
    hoursAgo: 290,
    crmStatus: 'contacted',
    reviewStatus: 'handled',
    outboundLifecycle: 'completed',
    recording: 'available',
    seconds: 58,
    transcript:
      'Agent: Hi, Demo Plumbing here, just confirming tomorrow’s garbage disposal installation at 2 pm. Customer: Yes, Anna speaking, 2 pm is fine. Agent: Great, see you then.',
    analysis: {
      counterparty_name: 'Anna Schmidt',
      summary:
        'Confirmation call: garbage disposal installation tomorrow at 2 pm, confirmed by Anna Schmidt.',
      subject: 'Garbage disposal installation confirmed for 2 pm',
      service_needed: 'Garbage disposal installation',
      services_match: true,
      lead_score: 6,
      preferred_date: 'tomorrow 2 pm',
      client_city: 'Austin',
      detected_language: 'en',
    },
  },
];
