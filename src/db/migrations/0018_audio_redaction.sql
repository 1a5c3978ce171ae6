-- What became of a call's recording when its transcript was redacted (docs/capture.md "Redaction"):
--   'silenced'      the redacted words' time spans were silenced in the stored recording;
--   'no_word_times' the speech-to-text provider gave no word times (or the transcript came from an
--                   adapter): the transcript is redacted, the audio may still hold what was said;
--   NULL            nothing was redacted, or redaction is off.
ALTER TABLE calls ADD COLUMN audio_redaction text
  CHECK (audio_redaction IS NULL OR audio_redaction IN ('silenced', 'no_word_times'));
