"""The codes of the findings `validate` and `check` report: one row each (generator.core.codes.registry)."""

from __future__ import annotations

from generator.core.codes.code import CONFIGURATION as C
from generator.core.codes.code import ERROR as E
from generator.core.codes.code import FILE as F
from generator.core.codes.code import INFO as I  # noqa: E741 - the table's three severities read as E, W, I
from generator.core.codes.code import SHARED as S
from generator.core.codes.code import WARNING as W
from generator.core.codes.code import Code

_TIMES_FIX = ("keep the times the runner wrote for every phase; a run whose times were edited or removed is "
              "measured again inside the window")
_CLAIM_FIX = "write the value recomputed from the run's prediction file"

AUDIT: tuple[Code, ...] = (
    # the readers: one file's format, whoever owns it (severity None: an error in a shared input, a warning in
    # a prediction file, which the run's own acceptance already counts against)
    Code("column-name-variant", W, F, "a header writes the seeds' column names exactly (case, no spaces around them)",
         "write the names as the seeds do"),
    Code("csv-syntax", None, F, "a CSV file follows RFC 4180 quoting",
         "quote cells that contain commas, quotes or line breaks; double inner quotes"),
    Code("csv-delimiter", None, F, "a CSV file is comma-separated, not separated by ';' or tabs",
         "save it as comma-separated CSV in UTF-8"),
    Code("decimal-comma", E, F, "a number is written with a decimal point, never a decimal comma",
         "write the number with a point"),
    Code("duplicate-column", E, F, "a header names each column once", "remove the repeated column"),
    Code("duplicate-key", E, F, "a JSON object names each key once", "keep one value per key"),
    Code("empty-file", None, F, "a CSV file has at least its header line", "write the header line"),
    Code("field-count", None, F, "every line has as many fields as the header",
         "quote commas inside cells; add the missing cells (empty when not recorded)"),
    Code("file-name-not-portable", E, F, "an input's path reads back the same from the bundle's BagIt manifests",
         "rename the file (and its path in protocol.json) to letters, digits, '.', '_' and '-'"),
    Code("file-too-large", None, F, "an input file stays under the size its role allows (--max-file-bytes)",
         "is it the right file? if it is genuine, raise the limit"),
    Code("formula-like-cell", W, F, "a text cell does not start as a spreadsheet formula unless it is a number",
         "drop or move the first character; open the file in a spreadsheet only as text"),
    Code("invalid-encoding", E, F, "a CSV file is UTF-8", "save the file as UTF-8 (with or without BOM)"),
    Code("invalid-id", None, F, "an ID is not empty, space-padded or over-long",
         "write the ID exactly as in the expected IDs"),
    Code("invalid-unicode", E, F, "a JSON string holds no lone surrogate escape", "write the text as UTF-8"),
    Code("invisible-character", None, F, "no bidirectional control or zero-width character in a text",
         "delete the character(s) and retype the text around them"),
    Code("line-too-long", None, F, "a line of an ID file stays under the length its role allows",
         "end every row with a line break (is it a text file at all?)"),
    Code("malformed-json", E, F, "a JSON file is strict JSON (no NaN, no trailing comma, no comment)",
         "write valid JSON"),
    Code("missing-column", E, F, "a CSV header has every column of its schema", "add the missing column"),
    Code("missing-file", E, F, "every file the protocol or the grid names exists in the campaign folder",
         "add the file or correct the path"),
    Code("missing-value", E, F, "a required cell is not empty", "fill in the cell"),
    Code("not-boolean", E, F, "a boolean cell holds true or false", "write true or false"),
    Code("not-integer", E, F, "an integer cell holds an integer", "write a whole number"),
    Code("not-number", E, F, "a number cell holds a number", "write a number"),
    Code("number-too-large", E, F, "a number stays within a float's range and a bounded number of digits",
         "write the number as measured"),
    Code("path-outside-campaign", E, F, "paths stay inside the campaign folder",
         "use a relative path inside the campaign folder, without '..' or links out"),
    Code("prediction-header", None, F, "an ID file's header is exactly its columns (id,label or id)",
         "write the header the protocol's format names"),
    Code("renamed-column", E, F, "a column keeps its schema's name", "use the column's registered name"),
    Code("reordered-columns", W, F, "the columns are read by their names; another order than the seeds' is named once",
         "write the columns in the seeds' order for the tools that read them by position"),
    Code("schema-violation", E, F, "a JSON or CSV file satisfies its packaged schema",
         "correct the value the message names"),
    Code("too-deep", E, F, "a JSON document nests at most --max-json-depth levels", "flatten the document"),
    Code("unknown-column", E, F, "a CSV header has no column beyond its schema", "remove the column"),
    Code("unknown-label", None, F, "every label is one of the protocol's classes", "use only the protocol's classes"),
    # the shared inputs: protocol, expected IDs, reference, tariffs
    Code("corpus-size-mismatch", E, S, "the expected IDs are the registered number of distinct texts",
         "list every expected ID once"),
    Code("duplicate-expected-id", E, S, "each expected ID appears exactly once", "remove the repeated lines"),
    Code("duplicate-experiment", E, S, "each experiment of the protocol has its own id", "give each its own id"),
    Code("duplicate-tariff", E, S, "one price per GPU and duration", "keep one row"),
    Code("duplicate-variant", E, S, "each variant of an experiment has its own id", "give each its own id"),
    Code("duplicate-variant-value", E, S, "each variant of an experiment changes the declared variable",
         "give each variant its own value"),
    Code("empty-window", E, S, "the campaign window ends after it starts", "correct the window's start and end"),
    Code("reference-duplicate-id", E, S, "the reference labels each ID once", "keep one checked label per ID"),
    Code("reference-extra-id", E, S, "the reference labels only expected IDs",
         "remove IDs that are not in the expected IDs"),
    Code("reference-missing-id", E, S, "the reference labels every expected ID", "label every expected ID"),
    Code("registered-after-start", E, S, "the protocol is registered before the first measurement",
         "register the protocol before the runs; a later rule needs a new independent evaluation"),
    # the registration's seal (generator.audit.sealing.sealcheck): registration.json, its signature and its token
    Code("registration-not-sealed", W, S, "a registration is proven by a seal: without registration.json, "
         "registered_at and every rule of the protocol are the campaign's word",
         "seal the protocol with `gpu-audit register` before the runs, with --tsa to prove when"),
    Code("seal-invalid", E, S, "registration.json reads, and its CMS signature verifies over its exact bytes with "
         "the certificate it names", "keep the seal as `gpu-audit register` wrote it; a seal that does not verify "
         "proves nothing"),
    Code("seal-token-invalid", E, S, "the RFC 3161 token verifies and stamps the registration's signature",
         "keep registration.json.tsr as the authority gave it"),
    Code("sealed-after-window-start", E, S, "the registration is sealed before the campaign window starts: the "
         "token's time is before the window's start", "seal the protocol before the window; a seal made later "
         "needs a new campaign"),
    Code("sealed-after-first-run", E, S, "the registration is sealed before the first dated run phase",
         "seal the protocol before any run; a seal made after the runs needs a new campaign"),
    Code("sealed-file-changed", E, S, "each sealed file is byte for byte what was registered",
         "restore the registered file; a change after registration needs a new registration and new runs"),
    Code("sealed-file-missing", E, S, "each sealed file is still in the campaign folder",
         "restore the registered file"),
    Code("file-not-sealed", E, S, "every file the protocol fixes before the runs is sealed with it",
         "restore the registered protocol; a file added after registration needs a new registration and new runs"),
    Code("synthetic-data-mismatch", E, S, "the protocol's synthetic_data agrees with every measurement",
         "write synthetic_data as the figures are"),
    Code("tariff-not-catalogue", E, S, "a published price is the catalogue snapshot's unchanged, or the provider's "
         "as stated in the campaign with its support (a quote or page named in the source column, or a Lab "
         "archive's manifest that stands; a source of only blanks or invisible characters names nothing)",
         "copy the catalogue's price, name the provider's source, or mark the price illustrative"),
    Code("package-longer-than-needed", W, C, "the smallest package that covers the window is the package really "
         "needed: a longer one is named, with the difference in money", "say in the protocol's notes why the longer "
         "package was needed"),
    Code("rental-article-ids-mismatch", E, C, "a rental's provider article IDs are one per package, in order",
         "list one article ID per package, or leave article_ids out"),
    Code("rental-id-duplicate", E, S, "each rental of the protocol's `rentals` has its own id",
         "give each rental its own id, and name it in the experiments that ran in it"),
    Code("rental-periods-mismatch", E, C, "a rental that lists its periods names the first of them as "
         "duration_days, if it gives duration_days at all", "write the first period as duration_days, or leave it out"),
    Code("rental-unknown", E, S, "an experiment's rental is its own or the id of a rental listed in `rentals`",
         "list the rental in `rentals` with that id, or correct the name"),
    Code("rental-unused", W, S, "every rental listed in `rentals` is named by the experiments that ran in it",
         "name it in the experiments that ran in it, or remove it"),
    Code("reproduction-not-identical", E, C, "with the target identical, every warm run of a configuration writes "
         "the same prediction file", "find what makes the runs differ, or register the target they can meet"),
    Code("reproduction-beyond-bound", E, C, "with the target bounded, the metric's spread across a configuration's "
         "warm runs is at most the registered bound", "find what makes the runs differ, or register a bound they "
         "can meet"),
    Code("reproduction-not-registered", W, S, "the protocol states what is to be reproduced (identical, bounded or "
         "quality); absent, the default quality applies: acceptance alone",
         "register quality.reproduction before the runs of a new campaign"),
    Code("seed-not-listed", E, C, "an experiment with common seeds runs only the seeds it lists, and announces one of "
         "them", "write the seed a run used; a seed not listed before the runs belongs to another protocol"),
    Code("seed-runs-missing", E, C, "every variant keeps its registered warm and cold runs under each common seed",
         "keep every run of every listed seed, failures included, with its seed in the seed column"),
    Code("split-overlaps-evaluation", E, S, "training and tuning data are kept apart from the comparison corpus: no "
         "split shares an ID with the expected IDs", "evaluate on texts the model was not trained or tuned on"),
    Code("corpus-runs-missing", E, C, "when the useful work is several corpora, every configuration processes "
         "each of them: its registered runs on every corpus", "run every variant on every corpus the protocol lists"),
    Code("corpus-repeated", E, S, "each corpus of the useful work once, with its own revision: two corpora of the "
         "same content (expected IDs and reference labels) are one corpus, whatever their names", "give each corpus "
         "its own revision; list a corpus of the same content once"),
    Code("corpus-fingerprint-mismatch", E, S, "a corpus revision that carries a content fingerprint "
         "(content-sha256:) carries its expected IDs' and reference labels'", "register the fingerprint `check` "
         "computes (decision.json campaign.fingerprints), or put back the files the revision was registered with"),
    Code("subgroup-id-not-expected", E, S, "a planned subgroup is part of the comparison corpus: every ID it lists is "
         "an expected ID", "keep only expected IDs in the subgroup's ID file"),
    Code("subgroup-empty", E, S, "a planned subgroup names the expected IDs it is judged on", "list the subgroup's "
         "IDs, as its edges select them"),
    Code("subgroup-id-repeated", E, S, "a planned subgroup lists each of its texts once", "list each ID once"),
    Code("subgroups-overlap", E, S, "planned subgroups are set apart by their edges: each text in one subgroup at "
         "most", "select each subgroup's IDs by its edges alone"),
    Code("subgroup-repeated", E, S, "each planned subgroup is registered once, with one rule", "give each subgroup "
         "its own ID"),
    Code("subgroup-ids-left-out", E, S, "planned subgroups whose edges cover every length hold every expected ID: "
         "a text in none of them was removed, and removing hard examples improves a score unseen",
         "put each text back in the ID file of the subgroup its length selects, as registered"),
    Code("subgroup-edges-unread", I, S, "the subgroups' edges are read as length ranges (`A to B tokens`, "
         "`N tokens or more`) to check that they leave no text out", "write each subgroup's edges in one of the "
         "forms docs/campaign-folder.md lists"),
    Code("subgroup-rule-looser-unexplained", W, S, "a subgroup's own threshold or tolerance looser than the corpus "
         "rule needs a reason registered before the runs", "register the reason in the subgroup's `reason`, or "
         "judge it by the corpus rule"),
    Code("reference-split-unknown", E, S, "the reference value names the registered split it was measured on",
         "register the split, or name one that is registered"),
    Code("reference-origin-unregistered", W, S, "the reference value names where it comes from: a registered split "
         "kept apart from the evaluation corpus, a publication, or an earlier gpu-audit bundle (without it, it may "
         "include evaluation data)", "register quality.reference.source before the runs"),
    Code("reference-origin-conflict", E, S, "the reference value has one origin: `split` is the same as a source of "
         "kind split", "keep `source` alone, or give `split` the split the source names"),
    Code("reference-citation-blank", E, S, "a publication the reference value comes from is cited: blank after "
         "trimming whitespace and invisible characters is no citation", "write the citation"),
    Code("lab-manifest-refused", E, S, "the Lab archive's MANIFEST.json lists tarifs-forfaits.csv once, with its "
         "size and a 64-hex SHA-256", "copy the archive's MANIFEST.json unchanged, or remove files.lab_manifest"),
    Code("lab-manifest-structure", E, S, "the Lab archive's MANIFEST.json lists its nine items: the size and SHA-256 "
         "of the eight content files, and itself without a checksum", "copy the archive's MANIFEST.json unchanged, "
         "or remove files.lab_manifest and name each provider price's source"),
    Code("lab-tariffs-structure", E, S, "a tariffs file presented as the Lab archive's (files.lab_manifest) holds "
         "its 45 prices: 15 models x 3 durations (3, 7 and 30 days)", "copy tarifs-forfaits.csv from the Lab archive "
         "unchanged, or remove files.lab_manifest"),
    Code("tariffs-not-in-manifest", E, S, "a tariffs file presented as the Lab archive's (files.lab_manifest) has "
         "the size and SHA-256 the manifest lists", "copy tarifs-forfaits.csv from the Lab archive unchanged"),
    Code("unknown-timezone", E, S, "the window's time zone is in the IANA database",
         "use a name such as Europe/Paris or UTC"),
    Code("window-exceeds-packages", W, S, "the window fits the packages rented; nothing extends them",
         "budget the extra periods explicitly or shorten the programme"),
    Code("window-out-of-range", E, S, "the window's times are real ISO 8601 date-times",
         "write it as YYYY-MM-DDTHH:MM:SS+HH:MM"),
    Code("window-time-ambiguous", E, S, "a local window time occurs once in its time zone",
         "write a time outside the repeated hour, or give the window in UTC"),
    Code("window-time-nonexistent", E, S, "a local window time exists in its time zone",
         "write a time outside the daylight-saving gap"),
    # a configuration's own evidence: its grid rows, prediction files and measurement
    Code("accepted-corpora-mismatch", E, C, "accepted corpora count distinct corpus revisions, never repeats",
         "write the recomputed count"),
    Code("allocated-exceeds-reserved", E, C, "allocated memory never exceeds reserved memory",
         "report the allocator's counters as read"),
    Code("completed-count-mismatch", E, C, "completed=N counts the items a failed run kept in its partial file",
         "write the count the partial file holds"),
    Code("completed-run-timed-zero", E, C, "a completed run's duration is measured: empty is unrecorded, 0 real",
         "write the measured duration, or leave it empty and say why"),
    Code("corpus-accepted-mismatch", E, C, "corpus_accepted is true only when every acceptance condition holds",
         _CLAIM_FIX),
    Code("corpus-revision-mismatch", E, C, "every run uses the one registered corpus revision",
         "use the corpus revision registered"),
    Code("different-work", E, C, "configurations ranked in one answer do the same work",
         "register one work for every experiment and measure again the experiment that did other work"),
    Code("drawn-sequence-missing", E, C, "a drawn run order is registered before the runs and followed",
         "register the sequence drawn before the runs in drawn_sequence"),
    Code("driver-is-runtime-version", E, C, "the driver is recorded apart from the runtime version",
         "record the driver with the provider's tool (nvidia-smi, rocm-smi)"),
    Code("driver-not-recorded", E, C, "the driver version is recorded with the provider's tool",
         "record the driver with the provider's tool (nvidia-smi, rocm-smi)"),
    Code("duplicate-row-key", E, C, "one grid row per attempt: experiment, variant, phase and run index unique",
         "give each attempt its own run_index; never replace a failed run"),
    Code("duration-below-measured", E, C, "a duration includes its run's measured forward pass",
         "write the duration the timer measured; a duration is never typed or cut"),
    Code("duration-beyond-bracket", E, C, "a duration lasts no longer than its run's dated phases allow",
         "write the duration the timer measured"),
    Code("duration-does-not-cover-window", E, C, "the package's 3, 7 or 30 days cover the window",
         "choose a package covering the window"),
    Code("duration-unmeasured", E, C, "each grid row is tied to a measured phase of its variant's measurement",
         "measure the runs with `gpu-audit campaign run` or `gpu-audit measure run` and link each variant to its "
         "measurement"),
    Code("cold-run-unmeasured", W, C, "a cold run after the first (another seed's or corpus's) has no phase in its "
         "variant's measurement, whose format 1 holds one cold_forward (format 2 holds each)",
         "measure the runs again with `gpu-audit campaign run`, whose measurement (format 2) holds each cold run"),
    Code("environment-not-seen", E, C, "the environment recorded is the one the measurement observed",
         "write what the measurement observed, or measure this run again"),
    Code("exclusion-not-registered", E, C, "only an exclusion registered in the protocol sets an attempt aside",
         "write the attempt as it ended (outcome=failed, oom or aborted)"),
    Code("expected-ids-mismatch", E, C, "expected_ids is the count of the expected list",
         "write the count of the expected list"),
    Code("failed-run-accepted", E, C, "a failed run is a failure observation, never an accepted result",
         "write corpus_accepted false for a failed run"),
    Code("failed-run-timed-zero", E, C, "a failed run has no duration", "leave elapsed_seconds empty"),
    Code("fewer-than-five-runs", W, C, "five measured runs per variant, in a rotated or drawn order",
         "register and run at least five measured runs per variant"),
    Code("incident-unexplained", W, C, "an incident row (failed, excluded or resumed attempt) explains itself in "
         "notes: error=, reason= or explanation=, in words", "add reason=<what happened and why> to the row's notes"),
    Code("fixed-value-mismatch", E, C, "only the declared variable changes across an experiment's rows",
         "study other changes in a separate experiment"),
    Code("format-valid-mismatch", E, C, "format_valid is recomputed from the prediction file", _CLAIM_FIX),
    Code("gpu-count-not-seen", E, C, "the GPUs reported are the ones the program used, not the package's",
         "report the number of GPUs actually used"),
    Code("lot-devices-count", E, C, "devices_used counts the GPUs listed in environment.devices",
         "report the GPUs the program used, each once"),
    Code("lot-device-twice", E, C, "each GPU of a run over several is listed once (by device and by UUID)",
         "list each GPU the program used once, with the UUID the runtime reports"),
    Code("lot-share-missing", E, C, "a pass over several GPUs records each GPU's share, in rank order",
         "keep each GPU's share as the runner wrote it; a pass that ran on fewer GPUs is measured again"),
    Code("lot-device-idle", E, C, "every GPU of a run over several works in every pass (a lot's GPUs are all paid "
         "for)", "keep each GPU's share as the runner wrote it; a pass that ran on fewer GPUs is measured again"),
    Code("lot-peak-mismatch", E, C, "with several GPUs a pass's memory is its highest GPU's reading, never a sum",
         "write the highest per-GPU reading; each GPU's stays in its share"),
    Code("gpu-model-not-seen", E, C, "gpu_model is the hardware the runtime saw, not an offer",
         "copy the name the runtime reports"),
    Code("gpu-not-rented", E, C, "the GPU measured is the GPU the protocol rents: the runtime's name (the grid's "
         "gpu_model, a measurement's gpu_name) is the rented model's, whole, vendor and brand words aside",
         "run on the rented GPU, or register the rental of the GPU used"),
    Code("gpu-count-not-registered", E, C, "a measurement's devices_used is the registered gpu_count (1 when not "
         "registered)", "measure on the registered number of GPUs, or register the count actually used"),
    Code("device-not-gpu", E, C, "the device measured is a GPU: a run on the CPU, or a measurement that saw no GPU, "
         "is never ranked", "run the campaign on the rented GPU without --allow-cpu-for-tests"),
    Code("test-run", E, C, "a measurement marked test_run (campaign run --allow-cpu-for-tests) is never evidence of a "
         "decision", "run the campaign on the rented GPU without --allow-cpu-for-tests"),
    Code("gpus-beyond-rental", E, C, "the program runs on the GPUs of the lots billed",
         "rent and register the lots the runs used, or report the GPUs actually used"),
    Code("ids-match-mismatch", E, C, "ids_match compares the ID sets, not their counts", _CLAIM_FIX),
    Code("illustrative-price", I, C, "only published prices commit a budget", "check the provider's current offer"),
    Code("input-order-unrecorded", E, C, "each variant of an input-order series records the order it ran in its "
         "measurement JSON", "measure the variant with a runner that writes configuration.input_order, and link it"),
    Code("measurement-config-mismatch", E, C, "a measurement file describes the variant it is linked to",
         "link the measurement of the variant's own run, or measure it again"),
    Code("lab-measurement-unreadable", E, C, "a configuration's measurement is the format's own file, not the Lab's "
         "`mesure_memoire.py measure` output", "measure the variant with `gpu-audit campaign run` or `gpu-audit "
         "measure run` and link that file"),
    Code("measurement-not-linked", E, C, "memory feasibility needs a measurement of the variant itself",
         "add the variant's measurement and name it in its `measurement` field"),
    Code("measurement-without-gpu", E, C, "a measurement is made on the GPU it names",
         "measure again on the GPU; never copy figures into a file that saw no GPU"),
    Code("memory-disagrees", E, C, "the grid's memory counters are the measurement's, unchanged",
         "copy the counters from the measurement file unchanged"),
    Code("metric-range-exceeded", E, S, "the rule's threshold and reference values lie in the metric's range "
         "([-1, 1] for Matthews correlation and Cohen's kappa, [0, 1] for the others), its tolerances and bound "
         "between 0 and the range's width", "register values the metric can take, set before the runs"),
    Code("metric-unknown", E, S, "the protocol's quality.metric is one of the registered metrics (docs/check.md)",
         "write one of the registered metrics; the finding lists them"),
    Code("missing-attempt", E, C, "every registered attempt keeps its row, failures included",
         "keep one row per attempted run; a failed run is kept, not deleted or replaced"),
    Code("missing-duration", E, C, "every completed run keeps its raw duration",
         "fill in the measured duration, or write outcome=failed in notes"),
    Code("missing-prediction-file", E, C, "a completed run's prediction file exists",
         "add the run's id,label file; a failed run with completed=0 may have none"),
    Code("no-run-times", W, C, "runs are dated: after registration, inside the window, before the deadline",
         "measure with `gpu-audit campaign run`, which dates every phase"),
    Code("no-tariff", W, C, "prices come from the tariffs file only",
         "add the provider's published price, or accept an undefined cost"),
    Code("not-comparable", E, C, "only the declared variable differs between an experiment's runs",
         "measure again with the registered software stack"),
    Code("observed-ids-mismatch", E, C, "observed_ids counts the prediction file's distinct IDs", _CLAIM_FIX),
    Code("outcome-disagrees-measurement", E, C, "a run's outcome is the one its measurement records",
         "report the run as it happened"),
    Code("package-does-not-cover-window", E, C, "the package covers the whole campaign window",
         "rent a package that covers the window, or budget the extra periods"),
    Code("package-mismatch", E, C, "the grid reports the package the protocol registers",
         "report the package actually committed, as registered"),
    Code("package-total-mismatch", E, C, "a package total is price per lot times lots, in integer cents",
         "write the recomputed total"),
    Code("package-total-unverifiable", E, C, "a package total rests on a published tariff",
         "leave the total empty, or add the provider's published price to the tariffs file"),
    Code("peak-below-baseline", E, C, "a memory peak is at least the baseline",
         "record the absolute peak after resetting the peak statistics"),
    Code("phase-order", E, C, "a measurement's phases follow the Lab's order", "write the phases in the Lab's order"),
    Code("quality-direction-contradicts-metric", E, S, "the registered quality direction is the metric's own: "
         "every registered metric is a score, higher_is_better",
         "write direction higher_is_better, with the threshold as the lowest acceptable value"),
    Code("quality-value-mismatch", E, C, "quality_value is the registered metric recomputed from the predictions",
         "recompute the metric from the prediction file against the reference"),
    Code("resume-not-declared", E, C, "a resumed attempt belongs to a declared resume variant, never to the variant "
         "whose run it resumes", "keep the interrupted attempt as it ended; register the resume setting as a variant "
         "of its own (variants[].resume) holding the resumptions"),
    Code("resume-of-invalid", E, C, "a resume variant resumes another variant of its experiment, not itself a resume "
         "variant, and declares that variant's value", "name in resume.of the variant whose interrupted attempts it "
         "resumes, and declare its value"),
    Code("resume-target-invalid", E, C, "each attempt of a resume variant names, once, an interrupted attempt before "
         "it (never itself, in a chain that goes back to the resumed variant), of its phase, seed and corpus, and is "
         "outcome=resumed or keeps the failure that interrupted it", "write resumed=<variant>/<phase>/<run_index> "
         "of the interrupted attempt in notes, with outcome=resumed once the corpus is completed"),
    Code("resume-time-unmeasured", W, C, "a resumed duration counts the interrupted attempt's time, from its "
         "measured start and end", "date every phase, the failed ones included"),
    Code("rule-not-registered", E, C, "the quality rule reported is the pre-registered one",
         "report the registered rule; a changed rule needs a new protocol"),
    Code("run-after-deadline", E, C, "a run ends before the campaign's deadline", "measure again inside the window"),
    Code("run-before-registration", E, C, "a run starts after the protocol's registration",
         "measure again after registering the protocol"),
    Code("revision-not-immutable", E, C, "a model or tokenizer revision is immutable: a 40-hex commit, "
         "sha256:<64 hex>, sha256sum:<64 hex>, or the forms `campaign run` writes, never a moving name such as main",
         "write the commit or the SHA-256 of the files the runs loaded"),
    Code("run-order-missing", E, C, "each experiment registers its run order: rotated, or drawn with its sequence",
         "register order rotated, or the order that was followed"),
    Code("run-order-not-registered", E, C, "the runs follow the registered run order",
         "run the campaign again in the registered order"),
    Code("run-outside-window", E, C, "a run lies inside the campaign window", "measure again inside the window"),
    Code("run-time-bracket-short", E, C, "a phase's start and end bracket its own duration", _TIMES_FIX),
    Code("run-time-invalid", E, C, "run times are UTC instants, the end not before the start", _TIMES_FIX),
    Code("run-times-missing", E, C, "each measurement dates its own runs when the campaign's others do",
         "measure this variant again inside the registered window"),
    Code("run-times-out-of-order", E, C, "a measurement's phases are dated in their order", _TIMES_FIX),
    Code("run-times-partial", E, C, "a measurement that dates one phase dates them all", _TIMES_FIX),
    Code("runs-overlap", E, C, "runs on one device follow one another", _TIMES_FIX),
    Code("synthetic-model-measurement", E, C, "a configuration's memory evidence measures its own model",
         "measure with the campaign's model and link that file"),
    Code("unknown-experiment", E, C, "a grid row names an experiment of the protocol", "use a registered experiment"),
    Code("unknown-outcome", E, C, "outcome= is failed, oom, aborted, excluded or resumed",
         "write one of the known outcomes, and completed=N for a failure"),
    Code("unknown-variant", E, C, "a grid row names a variant of its experiment", "use a registered variant"),
    Code("unregistered-attempt", E, C, "no more attempts than registered per variant",
         "report extra attempts as a new experiment; never rerun to replace a result"),
    Code("variant-value-mismatch", E, C, "a variant's rows all apply its registered value",
         "keep the attempt under its own variant; a changed setting is a new variant"),
    Code("warm-rows-mismatch", E, C, "one warm_forward row per attempted repeat",
         "keep one warm_forward row per attempted repeat, the failed one included"),
    Code("warmup-mismatch", E, C, "one warm-up rule for every variant, cold and warm runs kept apart",
         "apply the same registered warm-up to every variant"),
    Code("zero-not-measured", E, C, "an empty cell is never written as 0",
         "leave the cell empty and say in notes why it was not measured"),
)
