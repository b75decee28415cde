"""The tf-idf branch of `captioner train classify --tfidf`: a linear model over each document's
terms beside the hierarchical attention network, its weights fitted as a linear SVM
(scikit-learn's LinearSVC) on the training posts and kept fixed (--tfidf-init svm), scaled by the
gain that makes its out-of-fold logits best calibrated, so that the network learns what the
terms miss. The vocabulary of terms (`train_terms`), the branch's features of a batch of
documents (`branch_features`), the SVM fit (`fit_branch_svm`, `svm_logits`,
`out_of_fold_svm_logits`) and the gain (`logit_gain`)."""

def branch_features(model, inputs, batch_size=256):
    """The tf-idf branch's features of every document (unscaled, L2-normalized; column 0 of a
    --tfidf-terms branch is "no term") as a scipy CSR matrix (N, branch vocabulary)."""
    import numpy as np
    import scipy.sparse as sp
    import tensorflow as tf

    x = inputs if isinstance(inputs, dict) else {"document": inputs}
    count = len(x["document"])
    blocks = []
    for i in range(0, count, batch_size):
        batch = {k: tf.convert_to_tensor(v[i:i + batch_size]) for k, v in x.items()}
        blocks.append(sp.csr_matrix(model.tfidf_features(batch if model.tfidf_terms else batch["document"]).numpy()))
    return sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, int(model.idf.shape[0])), dtype=np.float32)


def logit_gain(logits, labels):
    """The one positive factor g minimizing the cross-entropy of softmax(g * logits) on these
    labels (temperature scaling, Guo et al. 2017, of an SVM's decision values: Platt scaling with
    one shared slope). Fitted on out-of-fold decision values, it makes the branch's margins
    log-odds on the scale of the HAN's logits; the branch's argmax does not change."""
    import numpy as np
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    logits, labels = np.asarray(logits, np.float64), np.asarray(labels)
    loss = lambda g: -float(log_softmax(g * logits, axis=1)[np.arange(len(labels)), labels].mean())  # noqa: E731
    return float(minimize_scalar(loss, bounds=(1e-3, 1e3), method="bounded").x)


def fit_branch_svm(model, features, labels, c=1.0, gain=1.0):
    """Set the tf-idf branch to a LinearSVC (one-vs-rest, squared hinge, scikit-learn's defaults)
    fitted on its train ``features`` (`branch_features`): its logits are then the SVM's decision
    values times ``gain`` (the branch reads features scaled by ``tfidf_scale``, so the kernel is
    the SVM's coefficients over it). Returns what was fitted, for the card."""
    import time

    import numpy as np
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    labels = np.asarray(labels)
    k = len(model.labels)
    missing = sorted(set(range(k)) - set(labels.tolist()))
    if missing:
        from captioner.errors import InputError

        raise InputError(f"--tfidf-init svm needs train documents of every label; labels {missing} have none")
    svm = LinearSVC(C=c, random_state=0).fit(features, labels)  # its dual solver shuffles
    coef, intercept = svm.coef_, svm.intercept_
    if k == 2:  # one decision value d for label 1: logits (-d/2, d/2), as `svm_logits` writes them
        coef, intercept = np.concatenate([-coef, coef]) / 2, np.concatenate([-intercept, intercept]) / 2
    model.sparse_classifier.kernel.assign((gain * coef.T / model.tfidf_scale).astype(np.float32))
    model.sparse_classifier.bias.assign((gain * intercept).astype(np.float32))
    train_accuracy = float((svm.predict(features) == labels).mean())
    return {"method": "svm", "c": c, "gain": round(gain, 4), "train_accuracy": round(100 * train_accuracy, 2),
            "features": int(features.shape[1]), "fit_s": round(time.perf_counter() - t0, 1)}


def svm_logits(svm, features, k):
    """A fitted LinearSVC's decision values as (N, k) logits over all k labels: a binary SVM's
    one value d as (-d/2, d/2); a label it was not fitted on gets -1 ("not this")."""
    import numpy as np

    scores = np.full((features.shape[0], k), -1.0)
    d = svm.decision_function(features)
    if d.ndim == 1:  # two labels fitted
        scores[:, svm.classes_[0]], scores[:, svm.classes_[1]] = -d / 2, d / 2
    else:
        scores[:, svm.classes_] = d
    return scores


def out_of_fold_svm_logits(features, labels, k, folds=5, seed=1, c=1.0):
    """(N, k) float32: each train document's logits from the LinearSVC that `fit_branch_svm`
    fits, but fitted on the other ``folds`` - 1 folds (label-stratified). A frozen branch's own
    logits on its train posts are in-sample (it fits them: 99.9% of 20 Newsgroups train); a HAN
    trained beside those learns to distrust it and to overfit what is left. Beside out-of-fold
    logits it learns what the SVM misses on posts it has not seen (stacked generalization, Wolpert
    1992), which is what it meets at test time."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    labels = np.asarray(labels)
    out = np.zeros((len(labels), k), np.float32)
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fit_idx, held_idx in split.split(np.zeros(len(labels)), labels):
        svm = LinearSVC(C=c, random_state=0).fit(features[fit_idx], labels[fit_idx])
        out[held_idx] = svm_logits(svm, features[held_idx], k)
    return out


def train_terms(documents, min_df=2, ngrams=1):
    """The tf-idf branch's vocabulary (--tfidf-terms): the terms (scikit-learn's default analyzer,
    word n-grams up to `ngrams`) of at least `min_df` train documents, sorted, as
    `TfidfVectorizer(min_df=min_df, ngram_range=(1, ngrams))` keeps them."""
    from collections import Counter

    from captioner.models.document_classifier import text_terms

    df = Counter(t for d in documents for t in set(text_terms(d.text, ngrams)))
    return sorted(t for t, n in df.items() if n >= min_df)
