"""Every abbreviation and term the pages use, defined in a sentence a newcomer can read.

The sidebar's glossary shows this list on every page (:func:`dpcore.ui.navigation.sidebar_menu`), and a test
checks that each abbreviation a page's first screen uses is defined here.
"""
from __future__ import annotations

#: term -> definition; abbreviations first spelled out
GLOSSARY: dict[str, str] = {
    "ε (epsilon)": "The privacy budget. Whatever is released changes an attacker's odds about any one record (or "
                   "whatever the guarantee protects: a label, a client's data, some pixels) by at most a factor "
                   "e^ε, plus the additive slack δ of an (ε, δ) guarantee. Smaller is more private; ε = ∞ means no "
                   "privacy.",
    "δ (delta)": "The slack of an (ε, δ) guarantee: any set of outcomes may be more likely on one of two "
                 "neighbouring data sets than e^ε times its probability on the other, by up to δ. It is not the "
                 "chance that the ε bound fails: the outcomes where the ratio passes e^ε can be far likelier than δ. "
                 "Keep it well below 1/n for n records: a δ of 1/n would allow "
                 "publishing one whole record picked at random (Dwork & Roth 2014, section 2.3).",
    "Neighbouring data sets": "Two data sets that differ in one record (added, removed or replaced). Differential "
                              "privacy promises that the output hardly changes between them. Each guarantee is "
                              "stated for one of the two relations: replacing a record is removing one and adding "
                              "another, so an ε for a record added or removed holds for a record replaced only as "
                              "2ε (group privacy, Dwork & Roth 2014), and a replace-one ε says nothing about a "
                              "record added or removed.",
    "Sensitivity": "The most one record can change a query's answer; the noise is scaled to it.",
    "Laplace mechanism": "Adds noise from a Laplace distribution of scale sensitivity/ε: pure ε-DP.",
    "Gaussian mechanism": "Adds normally distributed noise scaled to the L2 sensitivity: (ε, δ)-DP.",
    "Clip norm (C)": "The largest length a single example's gradient (or a client's update) may have; longer ones "
                     "are scaled down to C, which bounds the sensitivity.",
    "Noise multiplier (σ)": "The noise's standard deviation divided by the clip norm.",
    "DP-SGD": "Differentially private stochastic gradient descent (Abadi et al. 2016): clip each example's "
              "gradient, add Gaussian noise to their sum, take a step.",
    "RDP": "Rényi differential privacy (Mironov 2017), a way of adding up the privacy cost of many noisy steps.",
    "zCDP": "Zero-concentrated differential privacy (Bun & Steinke 2016), another accounting of composed "
            "Gaussian noise; the 2020 US Census states its budget as zCDP ρ.",
    "PLD": "Privacy loss distribution: the distribution of the privacy loss, composed numerically on a grid "
           "rounded the pessimistic way, so the ε stays an upper bound; the tightest accounting here.",
    "Moments accountant": "Abadi et al.'s (2016) accounting of DP-SGD's sampled Gaussian steps, computed today "
                          "with RDP.",
    "Composition": "Running several private steps on the same data: their ε add up (naively) or grow more "
                   "slowly (advanced composition, RDP, PLD).",
    "ERM": "Empirical risk minimisation: fitting a model by minimising its average loss on the training rows "
           "(Chaudhuri, Monteleoni & Sarwate 2011 make it private by output or objective perturbation).",
    "Output perturbation": "Train without noise, then add noise to what is released: the model's weights (DP-ERM, "
                           "whose regularised, convex loss bounds how far one record moves them, Chaudhuri et al. "
                           "2011), or, on the Train page, each answer the network gives (ε per answer, adding up "
                           "over the answers).",
    "Objective perturbation": "Add a random term to the training objective, then minimise it exactly.",
    "RFF": "Random Fourier features: a random map that lets a linear model imitate an RBF kernel.",
    "Functional mechanism": "Zhang et al. (2012): add Laplace noise to the coefficients of the loss written as a "
                            "polynomial, then minimise the noisy loss.",
    "SSP": "Sufficient statistics perturbation: add noise to XᵀX and Xᵀy, then solve the linear regression.",
    "Λ (lambda)": "The regularisation strength; private ERM needs it to bound how far one record moves the model.",
    "DPLloyd": "Private k-means (Blum, Dwork, McSherry & Nissim 2005, as Su et al. 2016 study and tune it): each "
               "Lloyd round adds Laplace noise to the cluster counts and sums.",
    "Input perturbation": "Add noise to every record before any analysis, so anything computed after is private.",
    "Label DP": "Protects only the labels (the features are public); e.g. randomized response on each label.",
    "Randomized response": "Report the true answer with some probability, otherwise a random one (Warner 1965).",
    "PATE": "Private aggregation of teacher ensembles (Papernot et al. 2017): teachers trained on disjoint parts "
            "vote, noise is added to the vote count, and a student learns from the noisy answers.",
    "GNMax": "Gaussian noisy max (Papernot et al. 2018): add Gaussian noise to each class's vote count and "
             "answer with the largest.",
    "FedAvg": "Federated averaging (McMahan et al. 2017): clients train on their own data and send only model "
              "updates, which the server averages.",
    "DP-FedAvg": "FedAvg with each client's update clipped and Gaussian noise added to the average, so the model "
                 "protects each whole client (user-level privacy).",
    "IID": "Independent and identically distributed: every client's data is drawn from the same mix of classes.",
    "DCT": "Discrete cosine transform: rewrites an image as a sum of waves. The networks' DCT features keep a "
           "fixed block of the lowest-frequency ones, the same for every image (choosing each image's largest would "
           "depend on the data): the model gets far fewer weights, and DP-SGD's noise grows with the number of "
           "weights it perturbs (Tramèr & Boneh 2021).",
    "DP-Pix": "Fan's (2018) private images: average the pixels over blocks (pixelisation), then add Laplace noise "
              "to the block means; coarser blocks mean less noise per pixel. Its ε protects any m pixels (images "
              "that differ in at most m pixels are neighbours), not the whole picture.",
    "SVM": "Support vector machine: a linear classifier trained with the hinge loss; private here by ERM with its "
           "smooth Huber version, as Chaudhuri et al.'s objective perturbation needs a differentiable loss.",
    "HOG": "Histogram of oriented gradients: a summary of edge directions in an image, used as features.",
    "PSNR": "Peak signal-to-noise ratio in decibels: how close a noisy image is to the original (higher is "
            "closer).",
    "SSIM": "Structural similarity (Wang et al. 2004): 1 means the same structure as the original, 0 none of it, and "
            "below 0 its light and dark parts swapped (the noisy picture anti-correlated with the original).",
    "Membership inference": "An attack that guesses whether a given record was in the training data.",
    "LiRA": "Likelihood-ratio attack (Carlini et al. 2022): compares a record's score with the scores of "
            "shadow models trained with and without it.",
    "Shadow models": "Models the attacker trains the same way on data it chose, to learn what membership looks "
                     "like.",
    "TPR / FPR": "True-positive rate (members caught) and false-positive rate (false alarms: non-members wrongly "
                 "accused). The Attack page reads an attack at 1% false alarms.",
    "ROC curve": "Receiver operating characteristic: an attack's members caught (TPR) against its false alarms "
                 "(FPR), as it accuses more and more records; the diagonal is guessing, and the higher the curve, "
                 "the more the model gives away.",
    "AUC": "Area under the ROC curve: 0.5 is guessing, 1 is a perfect attack.",
    "Audit": "Testing a privacy claim with an attack: the attack's success proves a lower bound on the true ε of "
             "the training algorithm. It can show a claim is false (the bound above the claimed ε), never that a "
             "model is private: a weak attack proves little.",
    "Canary": "A record planted in the training data to test whether the model gives it away.",
    "Black-box / white-box attack": "A black-box attacker only asks the released model questions and reads its "
                                    "answers; a white-box one sees inside the training, here every noisy step, the "
                                    "attacker DP-SGD's guarantee is written for, so it can prove more of the ε.",
    "Chance level": "The accuracy of always answering the most common class; a model at chance has learnt "
                    "nothing.",
    "Mean predictor": "For regression, the trivial model that answers the training rows' mean label for every "
                      "row; a private model that does worse has learnt nothing useful.",
    "Verdict bands": "How the pages judge an ε: Strong privacy (ε ≤ 1), Moderate privacy (1 < ε ≤ 4), Weak "
                     "guarantee (4 < ε ≤ 10) and Nominal guarantee only (ε > 10), where the bound alone promises "
                     "next to nothing.",
    "Poisson sampling": "Each step's batch takes every record independently with probability q, so its size "
                        "varies; DP-SGD's accounting (amplification by sampling) assumes it. Shuffled fixed-size "
                        "batches are often reported the same way, which is not a proof (Chua et al. 2024); here they "
                        "are accounted without amplification, one Gaussian mechanism per epoch.",
    "DP-ERM": "Differentially private empirical risk minimisation (Chaudhuri, Monteleoni & Sarwate 2011): a "
              "regularised logistic regression or SVM made private by output or objective perturbation.",
    "Averaged iterates": "The model released is a running average of its weights over the training steps (an "
                         "exponential moving average), not the last step's weights: the single steps' noise averages "
                         "out. Every step is already covered by the accountant, so the average costs no extra ε "
                         "(post-processing).",
    "Seed": "A number that fixes every random draw, noise included, so a run can be repeated exactly: good for "
            "teaching and comparing, never for a real release (anyone who knew the seed could remove the noise).",
    "Secure noise": "Noise drawn from the operating system's cryptographic source and rounded to a grid, which "
                    "defeats Mironov's (2012) floating-point attack on textbook noise; the mode for a real release.",
    "Tuning tax": "Choosing the best of several private runs leaks more than one run: the choice itself costs "
                  "privacy (Papernot & Steinke 2022 bound it when the number of runs is random: "
                  "repeat-and-select).",
    "Accuracy": "The fraction of test rows predicted correctly (between 0 and 1 on every page).",
    "MSE": "Mean squared error of a regression, in the label's units squared.",
    "R²": "The share of the label's variance a regression explains: 1 perfect, 0 no better than the mean.",
}


def define(term: str) -> str:
    """The definition of ``term`` (exact key, or its abbreviation before a space or parenthesis)."""
    if term in GLOSSARY:
        return GLOSSARY[term]
    for key, text in GLOSSARY.items():
        if key.split(" (")[0] == term or key.split(" / ")[0] == term:
            return text
    raise KeyError(f"{term!r} is not in the glossary")
