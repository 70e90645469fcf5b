"""The seed each finding code comes from: the seed sections its rules cite (tests/seed_rules*.py)."""

from __future__ import annotations

# 000/001/002: the protocol (German, Chinese, French); 003: the provider's article; 004: the Lab's README.
SEEDS: dict[str, str] = {
    "accepted-corpora-mismatch": (
        "000/001/002 §4 accepted_unique_corpora, §5; 003 'Nutzbare Ergebnisse zählen, nicht Wiederholungen von "
        "Messungen'"),
    "allocated-exceeds-reserved": "000/001/002 §3; 004 §3",
    "column-name-variant": "000/001/002 §4 (the distributed CSV holds only the headers); 004 Inhalt",
    "completed-count-mismatch": "003 'Wiederholen und Fehlschläge beibehalten'",
    "completed-run-timed-zero": "000/001/002 §4 elapsed_seconds; 003 'Wiederholen und Fehlschläge beibehalten'",
    "corpus-accepted-mismatch": (
        "000/001/002 §4 corpus_accepted; 003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem "
        "Wechsel der Präzision prüfen'"),
    "corpus-fingerprint-mismatch": "000/001/002 §4 corpus_revision",
    "corpus-revision-mismatch": "000/001/002 §1",
    "corpus-size-mismatch": "000/001/002 §1; 003 'Beispiel: dieselben 1.000 Texte klassifizieren'",
    "csv-delimiter": "000/001/002 §4 (usual CSV rules)",
    "decimal-comma": "000/001/002 §4",
    "device-not-gpu": "000/001/002 §2, §4 device; 004 §2 (never falls back to the CPU)",
    "different-work": (
        "003 'Beispiel: dieselben 1.000 Texte klassifizieren'; 003 'Eingaben, Referenz und Manifest vorbereiten'; "
        "000/001/002 §2; 000/001/002 §1, §2; 003 'Start, Aufwärmphase und gemessenen Durchlauf trennen'; "
        "000/001/002 §3; 003 'Qualität nach einem Wechsel der Präzision prüfen'"),
    "drawn-sequence-missing": "000/001/002 §3",
    "driver-is-runtime-version": "004 §2; 000/001/002 §2",
    "driver-not-recorded": "000/001/002 §2, §4 driver_version; 004 §2",
    "duplicate-expected-id": "000/001/002 §1",
    "duplicate-row-key": "000/001/002 §4; 003 'Wiederholen und Fehlschläge beibehalten'; 000/001/002 §3",
    "duplicate-tariff": "003 'Die gebundenen Kosten mit unseren Paketen berechnen'; 004 Inhalt",
    "duration-below-measured": "000/001/002 §4 elapsed_seconds, §3",
    "duration-beyond-bracket": (
        "000/001/002 §4 elapsed_seconds; 003 'Die Dauer mit dem vollständigen Zeitplan wählen'; 003 'Start, "
        "Aufwärmphase und gemessenen Durchlauf trennen'"),
    "duration-unmeasured": "000/001/002 §4 elapsed_seconds",
    "cold-run-unmeasured": "000/001/002 §3, §4 elapsed_seconds",
    "environment-not-seen": (
        "000/001/002 §4 gpu_model..runtime_version; 003 'Eingaben, Referenz und Manifest vorbereiten'"),
    "exclusion-not-registered": "000/001/002 §3; 003 'Wiederholen und Fehlschläge beibehalten'",
    "expected-ids-mismatch": "000/001/002 §4 expected_ids/observed_ids",
    "failed-run-accepted": "003 'Wiederholen und Fehlschläge beibehalten'; 000/001/002 §5",
    "failed-run-timed-zero": "000/001/002 §5; 003 'Wiederholen und Fehlschläge beibehalten'",
    "fewer-than-five-runs": "000/001/002 §3; 003 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'",
    "incident-unexplained": "000/001/002 §3, §4 notes; 003 'Wiederholen und Fehlschläge beibehalten'",
    "field-count": "000/001/002 §4",
    "fixed-value-mismatch": (
        "000/001/002 §2; 003 'Beispiel: dieselben 1.000 Texte klassifizieren'; 003 'Eingaben, Referenz und "
        "Manifest vorbereiten'; 000/001/002 §1, §4 seed; 003 'Nutzbare Ergebnisse zählen, nicht Wiederholungen "
        "von Messungen'"),
    "format-valid-mismatch": "000/001/002 §1, §4 ids_match/format_valid",
    "formula-like-cell": "000/001/002 §4 (usual CSV rules)",
    "gpu-count-not-seen": "000/001/002 §2; 003 'Speicher als Machbarkeitskriterium nutzen'; 004 §3",
    "gpu-model-not-seen": "000/001/002 §2, §4 gpu_model; 004 §2",
    "gpu-not-rented": (
        "000/001/002 §4 gpu_model; 003 'Eingaben, Referenz und Manifest vorbereiten'; 003 'Die gebundenen Kosten "
        "mit unseren Paketen berechnen'; 000/001/002 §2, §5"),
    "gpu-count-not-registered": "000/001/002 §2, §4 gpu_count; 003 'Speicher als Machbarkeitskriterium nutzen'",
    "gpus-beyond-rental": "000/001/002 §5; 003 'Speicher als Machbarkeitskriterium nutzen'",
    "ids-match-mismatch": "000/001/002 §1; 003 'Beispiel: dieselben 1.000 Texte klassifizieren'",
    "illustrative-price": "003 'Die gebundenen Kosten mit unseren Paketen berechnen'; 004 §4",
    "input-order-unrecorded": "003 'Beispiel: dieselben 1.000 Texte klassifizieren'",
    "invisible-character": (
        "000/001/002 §4 experiment_id..seed; 003 'Eingaben, Referenz und Manifest vorbereiten'; 000/001/002 §4 "
        "notes; 003 'Das Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'; 000/001/002 §1"),
    "measurement-config-mismatch": (
        "000/001/002 §4 precision/batch/context; 004 §3; 000/001/002 §2; 003 'Beispiel: dieselben 1.000 Texte "
        "klassifizieren'"),
    "lab-measurement-unreadable": "004 §3; 003 'Speicher als Machbarkeitskriterium nutzen'",
    "measurement-not-linked": "003 'Speicher als Machbarkeitskriterium nutzen'; 000/001/002 §3",
    "measurement-without-gpu": "003 'Wiederholen und Fehlschläge beibehalten'; 004 Voraussetzungen und Grenzen",
    "memory-disagrees": "000/001/002 §3; 003 'Speicher als Machbarkeitskriterium nutzen'; 004 §3",
    "metric-range-exceeded": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "metric-unknown": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "missing-attempt": (
        "000/001/002 §3; 003 'Wiederholen und Fehlschläge beibehalten'; 003 'Dauern lesen, ohne fünf Versuche zu "
        "überinterpretieren'"),
    "missing-duration": "000/001/002 §3, §4 elapsed_seconds",
    "missing-file": (
        "000/001/002 §5; 003 'Das Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'"),
    "missing-prediction-file": "000/001/002 §1, §5; 000/001/002 §1, §4 ids_match",
    "no-run-times": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "no-tariff": (
        "003 'Festlegen, was als akzeptiertes Ergebnis zählt', 'Die gebundenen Kosten mit unseren Paketen "
        "berechnen'"),
    "not-boolean": "000/001/002 §4 ids_match/format_valid",
    "not-comparable": "003 'Eingaben, Referenz und Manifest vorbereiten'; 000/001/002 §2",
    "observed-ids-mismatch": "003 'Beispiel: dieselben 1.000 Texte klassifizieren'",
    "outcome-disagrees-measurement": (
        "000/001/002 §3; 003 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'; 000/001/002 §5; 003 "
        "'Speicher als Machbarkeitskriterium nutzen'"),
    "package-does-not-cover-window": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'; 000/001/002 §5",
    "package-mismatch": "000/001/002 §4 duration_days; 000/001/002 §4 lots",
    "package-total-mismatch": (
        "000/001/002 §4 package_total_usd_minor; 000/001/002 §5; 003 'Die gebundenen Kosten mit unseren Paketen "
        "berechnen'; 004 §4"),
    "package-total-unverifiable": "000/001/002 §5; 004 §4",
    "path-outside-campaign": (
        "000/001/002 §5; 003 'Das Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'"),
    "peak-below-baseline": "000/001/002 §3; 004 §3",
    "phase-order": "004 §3",
    "quality-direction-contradicts-metric": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "quality-value-mismatch": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "reference-missing-id": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "registered-after-start": "003 'Festlegen, was als akzeptiertes Ergebnis zählt'; 000/001/002 §1",
    "registration-not-sealed": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "sealed-after-window-start": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "sealed-after-first-run": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "sealed-file-changed": (
        "000/001/002 §1, §5; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'; 003 'Qualität nach einem "
        "Wechsel der Präzision prüfen'"),
    "seal-invalid": "000/001/002 §1; 003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "renamed-column": "000/001/002 §4; 004 Inhalt",
    "reordered-columns": "000/001/002 §4 (the distributed CSV holds only the headers); 004 Inhalt",
    "resume-not-declared": "003 'Wiederholen und Fehlschläge beibehalten'",
    "resume-of-invalid": "003 'Wiederholen und Fehlschläge beibehalten'",
    "resume-target-invalid": "003 'Wiederholen und Fehlschläge beibehalten'",
    "resume-time-unmeasured": "003 'Wiederholen und Fehlschläge beibehalten'",
    "rule-not-registered": (
        "000/001/002 §1, §4 quality_*; 003 'Qualität nach einem Wechsel der Präzision prüfen'; 000/001/002 §1; "
        "003 'Festlegen, was als akzeptiertes Ergebnis zählt'"),
    "run-after-deadline": "003 'Festlegen, was als akzeptiertes Ergebnis zählt'",
    "run-before-registration": "003 'Festlegen, was als akzeptiertes Ergebnis zählt'; 000/001/002 §1",
    "revision-not-immutable": "000/001/002 §1, §4 model_revision, tokenizer_revision",
    "run-order-missing": "000/001/002 §3",
    "run-order-not-registered": "000/001/002 §3",
    "run-outside-window": (
        "003 'Die Dauer mit dem vollständigen Zeitplan wählen'; 003 'Start, Aufwärmphase und gemessenen Durchlauf "
        "trennen'"),
    "run-time-bracket-short": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "run-time-invalid": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "run-times-missing": (
        "003 'Festlegen, was als akzeptiertes Ergebnis zählt', 'Die Dauer mit dem vollständigen Zeitplan wählen'"),
    "run-times-out-of-order": "000/001/002 §3; 003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "run-times-partial": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "runs-overlap": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'; 000/001/002 §3",
    "schema-violation": (
        "003 'Festlegen, was als akzeptiertes Ergebnis zählt'; 000/001/002 §3; 003 'Start, Aufwärmphase und "
        "gemessenen Durchlauf trennen'; 000/001/002 §4 elapsed_seconds; 000/001/002 §1 (the reference's origin); 003 "
        "'Eingaben, Referenz und Manifest vorbereiten'"),
    "synthetic-data-mismatch": "004 §3; 000/001/002 Einleitung",
    "synthetic-model-measurement": "004 Inhalt, §3; 000/001/002 §3",
    "package-longer-than-needed": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "rental-article-ids-mismatch": "003 'Das Protokoll herunterladen und einen wiederverwendbaren Nachweis behalten'",
    "rental-id-duplicate": "003 'Die gebundenen Kosten mit unseren Paketen berechnen'",
    "rental-periods-mismatch": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "rental-unknown": "003 'Die gebundenen Kosten mit unseren Paketen berechnen'",
    "rental-unused": "003 'Die gebundenen Kosten mit unseren Paketen berechnen'",
    "reproduction-not-identical": "003 'Qualität nach einem Wechsel der Präzision prüfen'",
    "reproduction-beyond-bound": "003 'Qualität nach einem Wechsel der Präzision prüfen'",
    "reproduction-not-registered": "003 'Qualität nach einem Wechsel der Präzision prüfen'",
    "seed-not-listed": "003 'Qualität nach einem Wechsel der Präzision prüfen'; 000/001/002 §4 seed",
    "seed-runs-missing": (
        "003 'Qualität nach einem Wechsel der Präzision prüfen'; 003 'Wiederholen und Fehlschläge beibehalten'"),
    "split-overlaps-evaluation": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "corpus-runs-missing": "003 'Nutzbare Ergebnisse zählen, nicht Wiederholungen von Messungen'",
    "corpus-repeated": "003 'Nutzbare Ergebnisse zählen, nicht Wiederholungen von Messungen'; 000/001/002 §1",
    "subgroup-id-not-expected": ("003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel "
        "der Präzision prüfen'"),
    "subgroup-empty": ("003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel "
        "der Präzision prüfen'"),
    "subgroup-id-repeated": ("003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel "
                             "der Präzision prüfen'"),
    "subgroups-overlap": ("003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel der "
                          "Präzision prüfen'"),
    "subgroup-repeated": "003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel der "
                         "Präzision prüfen'",
    "subgroup-ids-left-out": ("003 'Beispiel: dieselben 1.000 Texte klassifizieren' (removing hard examples "
                              "improves the score), its 600 short, 300 medium and 100 long texts"),
    "subgroup-rule-looser-unexplained": "003 'Qualität nach einem Wechsel der Präzision prüfen' (never lower the "
                                        "threshold afterwards)",
    "reference-split-unknown": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "reference-origin-unregistered": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "reference-origin-conflict": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "reference-citation-blank": "000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'",
    "lab-manifest-refused": "004 Inhalt (MANIFEST.json: sizes and SHA-256 of the eight content files)",
    "lab-manifest-structure": "004 Inhalt (MANIFEST.json: the nine items, sizes and SHA-256 of the eight content "
                              "files, no checksum of itself)",
    "lab-tariffs-structure": "004 Inhalt (tarifs-forfaits.csv: 45 prices, 15 models x 3 durations); 004 §4",
    "tariffs-not-in-manifest": (
        "004 Inhalt (MANIFEST.json, tarifs-forfaits.csv); 003 'Die gebundenen Kosten mit unseren Paketen berechnen'"),
    "tariff-not-catalogue": (
        "003 'Die gebundenen Kosten mit unseren Paketen berechnen', 'Das Protokoll herunterladen'; 004 Inhalt, "
        "§4; 000/001/002 §5; 004 §4; 003 'Die gebundenen Kosten mit unseren Paketen berechnen'"),
    "test-run": "000/001/002 §2, §4 device; 004 §2 (never falls back to the CPU)",
    "unknown-column": (
        "000/001/002 §3, §4 (the 38 columns); 003 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'"),
    "unknown-outcome": "000/001/002 §3; 003 'Wiederholen und Fehlschläge beibehalten'",
    "unknown-timezone": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "unknown-variant": (
        "003 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Wiederholen und Fehlschläge beibehalten'"),
    "unregistered-attempt": "000/001/002 §3; 003 'Dauern lesen, ohne fünf Versuche zu überinterpretieren'",
    "variant-value-mismatch": "000/001/002 §4 precision/batch/context; 003 'Wiederholen und Fehlschläge beibehalten'",
    "warm-rows-mismatch": "004 §3; 000/001/002 §3",
    "warmup-mismatch": (
        "000/001/002 §3, §4 phase; 004 §3; 000/001/002 §3; 003 'Start, Aufwärmphase und gemessenen Durchlauf "
        "trennen'"),
    "window-exceeds-packages": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "window-time-ambiguous": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "window-time-nonexistent": "003 'Die Dauer mit dem vollständigen Zeitplan wählen'",
    "zero-not-measured": "000/001/002 §4; 003 'Wiederholen und Fehlschläge beibehalten'",
}
